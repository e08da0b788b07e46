#ifndef RESCIND_CRDKAFKA_SHIM_H
#define RESCIND_CRDKAFKA_SHIM_H
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#endif
