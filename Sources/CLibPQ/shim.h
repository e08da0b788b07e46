#ifndef RESCIND_CLIBPQ_SHIM_H
#define RESCIND_CLIBPQ_SHIM_H
#include <libpq-fe.h>
#endif
