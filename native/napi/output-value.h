// A captured output as the JS value exec hands on: a string (utf8) when
// asked for and it fits one, else a Buffer (copied when small, handed over
// when big). Shared by the event-loop watch and the executor's results.
#ifndef NOSHELL_OUTPUT_VALUE_H_
#define NOSHELL_OUTPUT_VALUE_H_

#include <node_api.h>
#include <stddef.h>

namespace noshell {

// Takes ownership of data (malloc'd, may be NULL when len is 0); undefined
// when V8 cannot make the value.
napi_value OutputValue(napi_env env, char* data, size_t len, bool as_string);

}  // namespace noshell

#endif  // NOSHELL_OUTPUT_VALUE_H_
