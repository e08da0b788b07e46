#ifndef RESCIND_CMALLOC_SHIM_H
#define RESCIND_CMALLOC_SHIM_H
/* glibc's allocator settings (mallopt), which Swift's Glibc module does not export. */
#include <malloc.h>
#endif
