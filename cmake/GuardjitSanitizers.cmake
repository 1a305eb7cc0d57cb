# Sanitizer and fuzzing modes, included from the top-level CMakeLists.txt.
# At most one of them per build directory:
#
#   GUARDJIT_SANITIZE=ON  ASan + UBSan on everything, g++ or clang.
#   GUARDJIT_TSAN=ON      ThreadSanitizer on everything: the library, its tests
#                         and the tools (scripts/test.sh: build-tsan). g++ or
#                         clang. Debian's absl, protobuf, OpenBLAS, LLVM and
#                         libstdc++ stay uninstrumented; tests/tsan.supp lists
#                         the reports that come from that.
#   GUARDJIT_FUZZ=ON      ASan + UBSan on everything plus libFuzzer's coverage
#                         instrumentation, and the libFuzzer targets of
#                         tests/fuzz. clang only (clang++-19 matches the LLVM
#                         19 the library links): the library and the tests are
#                         compiled with -fsanitize=fuzzer-no-link,address,
#                         undefined, the fuzz targets linked with
#                         -fsanitize=fuzzer,address,undefined, the tests with
#                         -fsanitize=address,undefined (the sanitizer runtime
#                         carries no-op coverage callbacks). scripts/test.sh's
#                         build-asan is such a tree: the ASan + UBSan tests and
#                         the fuzz targets share one instrumented library
#                         instead of compiling it twice.
#
# GJ_SANITIZED is set in any of them (the tests leave out what cannot run
# instrumented).

if(GUARDJIT_FUZZ AND GUARDJIT_TSAN)
  message(FATAL_ERROR "GUARDJIT_FUZZ and GUARDJIT_TSAN exclude each other")
endif()
if(GUARDJIT_SANITIZE AND GUARDJIT_TSAN)
  message(FATAL_ERROR "GUARDJIT_SANITIZE (ASan) and GUARDJIT_TSAN exclude each other")
endif()

if(GUARDJIT_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang" OR NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "GUARDJIT_FUZZ needs clang (libFuzzer): configure with "
            "-DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 "
            "(Debian packages clang-19 libclang-rt-19-dev)")
  endif()
  # Coverage feedback and ASan/UBSan everywhere; libFuzzer's main only in the
  # fuzz targets (tests/fuzz/CMakeLists.txt adds -fsanitize=fuzzer there).
  # -fno-sanitize=function: clang's check of indirect calls reads a type
  # signature just before the callee, which JIT-compiled kernels do not have
  # (a kernel at the start of a page makes that read fault).
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined
                      -fno-sanitize=function -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  # -fsanitize-link-c++-runtime and libstdc++: C programs that link the
  # library (the old-header clients, the install test's consumers) need
  # UBSan's C++ half (the vptr checks), which clang links only into C++
  # links by default, and the C++ ABI it is built on.
  add_link_options(-fsanitize=address,undefined -fsanitize-link-c++-runtime)
  link_libraries($<$<LINK_LANGUAGE:C>:stdc++>)
elseif(GUARDJIT_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
elseif(GUARDJIT_TSAN)
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # g++ defines __SANITIZE_THREAD__ under -fsanitize=thread, and
    # protobuf's map_field.h then gives MapFieldBase two more members: code
    # compiled so disagrees on its layout with Debian's uninstrumented
    # libprotobuf (text parsing of a graph with kwargs crashes). Undefining
    # the macro keeps the headers as the libraries were built; the
    # instrumentation itself comes from -fsanitize=thread. (clang does not
    # define the macro.)
    add_compile_options(-U__SANITIZE_THREAD__)
  endif()
endif()

if(GUARDJIT_SANITIZE OR GUARDJIT_TSAN OR GUARDJIT_FUZZ)
  set(GJ_SANITIZED ON)
else()
  set(GJ_SANITIZED OFF)
endif()
