#pragma once
// Where tests find the shared SuiteSparse matrices: $SPMV_MATRICES if set (the GPU machine carries a
// copy), else ../shared/matrices beside the repository.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace spmv::test {

inline std::filesystem::path shared_matrices_dir() {
  if (const char* env = std::getenv("SPMV_MATRICES")) return env;
  return SPMV_SHARED_MATRICES;
}

// Every *.mtx.gz file there, sorted by name; empty when the folder is missing.
inline std::vector<std::filesystem::path> shared_matrix_files() {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (auto& e : std::filesystem::directory_iterator(shared_matrices_dir(), ec))
    if (e.path().string().ends_with(".mtx.gz")) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace spmv::test
