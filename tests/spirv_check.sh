#!/bin/sh
# Checks one SPIR-V module of clheap_add_spirv (cmake/clheapSpirv.cmake):
#   spirv-val accepts it;
#   it names its allocator (the entry point clheap_il_allocator_<number>) beside the
#   program's own kernel;
#   it has atomics, and every atomic and every fence is device scope (scope 1): a
#   work-group-scope one (scope 2, what OpenCL C 1.2's atomic_add and mem_fence become)
#   is not atomic, or orders nothing, between work-groups;
#   a module for devices without 64-bit atomics (<number>_atomics32) has no 64-bit atomic.
# Usage: spirv_check.sh <spirv-val> <spirv-dis> <module.spv> <allocator number> <kernel>
set -eu
val=$1 dis=$2 module=$3 number=$4 kernel=$5
"$val" "$module"
text=$("$dis" "$module")
echo "$text" | grep -q "OpEntryPoint Kernel %[A-Za-z0-9_]* \"clheap_il_allocator_$number\"" ||
  { echo "no entry point clheap_il_allocator_$number"; exit 1; }
echo "$text" | grep -q "OpEntryPoint Kernel %[A-Za-z0-9_]* \"$kernel\"" || { echo "no entry point $kernel"; exit 1; }
atomics=$(echo "$text" | grep -c " = OpAtomic" || true)
device_atomics=$(echo "$text" | grep -c " = OpAtomic[A-Za-z]* %[A-Za-z0-9_]* %[A-Za-z0-9_]* %uint_1 " || true)
fences=$(echo "$text" | grep -c "OpMemoryBarrier" || true)
device_fences=$(echo "$text" | grep -c "OpMemoryBarrier %uint_1 " || true)
[ "$atomics" -gt 0 ] || { echo "no atomic at all"; exit 1; }
if [ "$atomics" -ne "$device_atomics" ] || [ "$fences" -ne "$device_fences" ]; then
  echo "not device scope: $((atomics - device_atomics)) of $atomics atomics, $((fences - device_fences)) of $fences fences:"
  echo "$text" | grep " = OpAtomic\|OpMemoryBarrier" | grep -v " = OpAtomic[A-Za-z]* %[A-Za-z0-9_]* %[A-Za-z0-9_]* %uint_1 \|OpMemoryBarrier %uint_1 "
  exit 1
fi
case $number in *_atomics32)
  wide=$(echo "$text" | grep -c " = OpAtomic[A-Za-z]* %ulong " || true)
  [ "$wide" -eq 0 ] || { echo "$wide 64-bit atomics in a module without them"; exit 1; } ;;
esac
echo "valid; allocator $number; $atomics atomics and $fences fences, all device scope"
