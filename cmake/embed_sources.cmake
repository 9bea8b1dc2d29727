# cmake -DOUTPUT=<file.c> -DSYMBOL=<name> -DFILES="a;b;c" -P embed_sources.cmake
# Concatenates the OpenCL C files in order into one C string constant, dropping their
# #include lines of clheap's own files (the concatenation already holds them), so the
# result builds with clCreateProgramWithSource and no include path.
if(NOT OUTPUT OR NOT SYMBOL OR NOT FILES)
  message(FATAL_ERROR "embed_sources.cmake needs OUTPUT, SYMBOL and FILES")
endif()
set(text "")
foreach(file IN LISTS FILES)
  file(READ "${file}" content)
  string(REGEX REPLACE "#include \"clheap[a-z_]*\\.(h|cl)\"" "/* (embedded) */" content "${content}")
  get_filename_component(name "${file}" NAME)
  string(APPEND text "/* ---- ${name} ---- */\n${content}\n")
endforeach()
file(WRITE "${OUTPUT}.txt" "${text}")
file(READ "${OUTPUT}.txt" hex HEX)
file(REMOVE "${OUTPUT}.txt")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE "${OUTPUT}" "/* Generated from clheap's cl/ sources by embed_sources.cmake: do not edit. */\n"
                       "const char ${SYMBOL}[] = {\n${bytes}0x00};\n")
