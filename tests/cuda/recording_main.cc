// main of the binaries whose every CUDA call goes to the emulated device
// through the recorder (recording_driver.h): installed before anything reads
// the driver table.

#include <cstdio>

#include "gtest/gtest.h"
#include "runtime/cuda/cublaslt_api.h"
#include "runtime/cuda/cuda_driver.h"
#include "testing/cuda/emulated_cublaslt.h"
#include "testing/cuda/emulated_driver.h"
#include "tests/cuda/recording_driver.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // Before anything reads the driver table: every CUDA call in this binary
  // goes to the emulated device, through the recorder.
  guardjit::CudaDriver::InstallForTesting(guardjit::RecordingCudaDriver::Get());
  guardjit::CublasLtApi::InstallForTesting(guardjit::EmulatedCublasLt::Get());
  return RUN_ALL_TESTS();
}
