#include "guardjit/guardjit.h"

#define GJ_STR2(x) #x
#define GJ_STR(x) GJ_STR2(x)

extern "C" {

const char* gj_version(void) {
  return GJ_STR(GJ_API_VERSION_MAJOR) "." GJ_STR(GJ_API_VERSION_MINOR) ".0";
}

uint32_t gj_api_version(void) {
  return (uint32_t{GJ_API_VERSION_MAJOR} << 16) | GJ_API_VERSION_MINOR;
}

}  // extern "C"
