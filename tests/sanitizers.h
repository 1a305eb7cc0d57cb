// GJ_UNDER_SANITIZER: 1 where this file is compiled with ASan or TSan, by
// g++ (which defines __SANITIZE_ADDRESS__ / __SANITIZE_THREAD__) or clang
// (which, up to clang 19, only answers __has_feature). scripts/test.sh builds
// its ASan tree with clang-19 (shared with the fuzz targets) and its TSan tree
// with g++.
#ifndef GUARDJIT_TESTS_SANITIZERS_H_
#define GUARDJIT_TESTS_SANITIZERS_H_

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GJ_UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define GJ_UNDER_SANITIZER 1
#endif
#endif
#ifndef GJ_UNDER_SANITIZER
#define GJ_UNDER_SANITIZER 0
#endif

#endif  // GUARDJIT_TESTS_SANITIZERS_H_
