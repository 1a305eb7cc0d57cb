// Stands in front of the CUDA toolkit's cublasLt.h for cuda_api_headers_test.cc:
// guardjit declares the CUDA types it calls itself (runtime/cuda/), so no
// header of the library includes the toolkit's.
#error "cublasLt.h included: guardjit's headers must build without the CUDA toolkit"
