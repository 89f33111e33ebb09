/* The deprecated HSA 1.0 code object API (hsa_code_object_t). Aquila has no
 * BRIG finalizer and no serialized 1.0 code object format, so no valid
 * hsa_code_object_t can exist: every function validates its arguments and
 * reports the code object as invalid. Use code object readers instead. */
#include "hsa_internal.h"

hsa_status_t hsa_code_object_serialize(
    hsa_code_object_t code_object,
    hsa_status_t (*alloc_callback)(size_t size, hsa_callback_data_t data, void **address),
    hsa_callback_data_t callback_data, const char *options, void **serialized_code_object,
    size_t *serialized_code_object_size) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!alloc_callback || !serialized_code_object || !serialized_code_object_size)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
}

hsa_status_t hsa_code_object_deserialize(void *serialized_code_object,
                                         size_t serialized_code_object_size, const char *options,
                                         hsa_code_object_t *code_object) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  if (!serialized_code_object || !serialized_code_object_size || !code_object)
    return HSA_STATUS_ERROR_INVALID_ARGUMENT;
  return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
}

hsa_status_t hsa_code_object_destroy(hsa_code_object_t code_object) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
}

hsa_status_t hsa_code_object_get_info(hsa_code_object_t code_object,
                                      hsa_code_object_info_t attribute, void *value) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
}

hsa_status_t hsa_executable_load_code_object(hsa_executable_t executable, hsa_agent_t agent,
                                             hsa_code_object_t code_object, const char *options) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
}

hsa_status_t hsa_code_object_get_symbol(hsa_code_object_t code_object, const char *symbol_name,
                                        hsa_code_symbol_t *symbol) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
}

hsa_status_t hsa_code_object_get_symbol_from_name(hsa_code_object_t code_object,
                                                  const char *module_name, const char *symbol_name,
                                                  hsa_code_symbol_t *symbol) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
}

/* Code symbols only come from 1.0 code objects, so none is ever valid. */
hsa_status_t hsa_code_symbol_get_info(hsa_code_symbol_t code_symbol,
                                      hsa_code_symbol_info_t attribute, void *value) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  return HSA_STATUS_ERROR_INVALID_CODE_SYMBOL;
}

hsa_status_t hsa_code_object_iterate_symbols(hsa_code_object_t code_object,
                                             hsa_status_t (*callback)(hsa_code_object_t code_object,
                                                                      hsa_code_symbol_t symbol,
                                                                      void *data),
                                             void *data) {
  if (!aq_runtime_is_initialized()) return HSA_STATUS_ERROR_NOT_INITIALIZED;
  return HSA_STATUS_ERROR_INVALID_CODE_OBJECT;
}
