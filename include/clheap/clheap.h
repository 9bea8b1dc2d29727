/** \file
 * clheap: dynamic memory for OpenCL programs. One include for everything. */
#ifndef CLHEAP_CLHEAP_H
#define CLHEAP_CLHEAP_H

#include "clheap/version.h"
#include "clheap/status.h"
#include "clheap/device.h"
#include "clheap/cache.h"
#include "clheap/heap.h"
#include "clheap/programs.h"

#endif
