#ifndef RESCIND_CSODIUM_SHIM_H
#define RESCIND_CSODIUM_SHIM_H
#include <sodium.h>
#endif
