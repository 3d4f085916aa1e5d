// Memory of `spmv info` while it reads a matrix (issue 12): the peak resident set of the tool,
// measured by wait4 on the child so that the test process does not pollute it. (1) A generated
// file of a few tens of MB must be read within 2x its CSR bytes + 64 MB (the streamed reader holds
// the entries and a few blocks, never the whole text). (2) Size lines that claim far more than the
// memory allows must be refused at once, with a message naming the size needed and the limit.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct ChildRun {
  int exit_code = -1;
  double peak_mb = 0;  // ru_maxrss of the child, 10^6 bytes
  double seconds = 0;
  std::string err;
};

// Runs the spmv tool with `args`, stdout discarded; `address_space` > 0 sets RLIMIT_AS in the child.
ChildRun run_spmv(const std::vector<std::string>& args, const fs::path& err_file, rlim_t address_space = 0) {
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (address_space > 0) {
      const rlimit rl{address_space, address_space};
      ::setrlimit(RLIMIT_AS, &rl);
    }
    const int null = ::open("/dev/null", O_WRONLY);
    const int err = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(null, STDOUT_FILENO);
    ::dup2(err, STDERR_FILENO);
    std::vector<char*> argv{const_cast<char*>(SPMV_CLI_PATH)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(SPMV_CLI_PATH, argv.data());
    ::_exit(127);
  }
  ChildRun r;
  int status = 0;
  rusage usage{};
  ::wait4(pid, &status, 0, &usage);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.peak_mb = static_cast<double>(usage.ru_maxrss) * 1024 / 1e6;  // ru_maxrss is in KiB on Linux
  std::ifstream in(err_file);
  r.err.assign(std::istreambuf_iterator<char>(in), {});
  return r;
}

class ReadMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(SPMV_CLI_PATH).empty()) GTEST_SKIP() << "spmv_cli is not part of this build";
    dir_ = fs::temp_directory_path() / ("spmv_read_memory_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, const std::string& text) const {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }

  fs::path dir_;
};

TEST_F(ReadMemory, StreamedReadStaysWithinTwiceTheCsrPlus64MB) {
  // 4 M entries in 100 k rows, ~23 bytes a line: ~92 MB of text. The reader before streaming held
  // the text, a 24-byte-per-entry COO and the CSR at once (~270 MB here); the bound is ~194 MB.
  constexpr std::int64_t kRows = 100000, kEntries = 4000000;
  const fs::path path = dir_ / "big.mtx";
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n%lld %lld %lld\n", static_cast<long long>(kRows),
                 static_cast<long long>(kRows), static_cast<long long>(kEntries));
    std::uint64_t state = 12;
    for (std::int64_t k = 0; k < kEntries; ++k) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;  // Knuth's LCG: fixed, cheap
      std::fprintf(f, "%lld %llu %.9f\n", static_cast<long long>(k % kRows + 1),
                   static_cast<unsigned long long>((state >> 33) % kRows + 1), static_cast<double>(state >> 40) * 0x1p-24);
    }
    std::fclose(f);
  }
  const double text_mb = static_cast<double>(fs::file_size(path)) / 1e6;
  // CSR<double, int64> as `spmv info` holds it; duplicates are rare (4 M draws over 10^10 cells).
  const double csr_mb = (kEntries * 16.0 + (kRows + 1) * 8.0) / 1e6;
  const ChildRun r = run_spmv({"info", path.string()}, dir_ / "err.txt");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::printf("text %.1f MB, CSR %.1f MB: peak RSS %.1f MB (bound %.1f MB), %.2f s\n", text_mb, csr_mb, r.peak_mb,
              2 * csr_mb + 64, r.seconds);
  EXPECT_LE(r.peak_mb, 2 * csr_mb + 64);
}

// Each size line of issue 12 with one entry: refused within seconds, small, naming both sizes.
TEST_F(ReadMemory, HugeSizeLinesAreRefusedBeforeAllocating) {
  for (const std::string size_line : {"3000000000 3000000000 1", "2147483648 1 1", "200000000 200000000 1"}) {
    SCOPED_TRACE(size_line);
    const fs::path path = write("huge.mtx", "%%MatrixMarket matrix coordinate real general\n" + size_line + "\n1 1 1\n");
    const ChildRun r = run_spmv({"info", "--max-memory", "1G", path.string()}, dir_ / "err.txt");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_LT(r.seconds, 5.0);
    EXPECT_LT(r.peak_mb, 64.0);
    EXPECT_NE(r.err.find("huge.mtx:2: reading this"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("needs at least"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("the max_memory limit of 1.0 GB"), std::string::npos) << r.err;
  }
  // Without --max-memory the limit comes from the system: here RLIMIT_AS (ulimit -v) of 4 GB.
  const fs::path path = write("huge.mtx", "%%MatrixMarket matrix coordinate real general\n3000000000 3000000000 1\n1 1 1\n");
  const ChildRun r = run_spmv({"info", path.string()}, dir_ / "err.txt", rlim_t{4} << 30);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LT(r.seconds, 5.0);
  EXPECT_NE(r.err.find("needs at least 48.0 GB"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("RLIMIT_AS"), std::string::npos) << r.err;
}

// multiply also counts x and y: 200 M rows and columns need 3.2 GB of vectors beside the matrix.
TEST_F(ReadMemory, MultiplyCountsItsVectors) {
  const fs::path path = write("tall.mtx", "%%MatrixMarket matrix coordinate real general\n200000000 200000000 1\n1 1 1\n");
  const ChildRun info = run_spmv({"info", "--max-memory", "3G", path.string()}, dir_ / "err.txt");
  EXPECT_NE(info.err.find("needs at least 3.2 GB"), std::string::npos) << info.err;  // row pointers + cursor
  const ChildRun multiply = run_spmv({"multiply", "--max-memory", "4G", path.string()}, dir_ / "err.txt");
  EXPECT_NE(multiply.exit_code, 0);
  EXPECT_NE(multiply.err.find("needs at least 6.4 GB"), std::string::npos) << multiply.err;
}

// A gzip file (size unknown before inflating) whose size line claims 10^12 entries with one entry
// line: refused from the header instead of reserving for them.
TEST_F(ReadMemory, LyingEntryCountInGzipIsRefused) {
  const std::string text = "%%MatrixMarket matrix coordinate real general\n3 3 1000000000000\n1 1 1\n";
  const fs::path path = dir_ / "lie.mtx.gz";
  gzFile gz = gzopen(path.c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  gzwrite(gz, text.data(), static_cast<unsigned>(text.size()));
  gzclose(gz);
  const ChildRun r = run_spmv({"info", "--max-memory", "8G", path.string()}, dir_ / "err.txt");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LT(r.peak_mb, 64.0);
  EXPECT_NE(r.err.find("1000000000000 entries needs at least"), std::string::npos) << r.err;
}

// `spmv bench` measures the host's copy bandwidth with two arrays of 4x the last-level cache (STREAM's
// rule), each at most an eighth of the memory available: under an address-space limit of 1 GiB a small
// bench still runs, whatever L3 the host reports (a 320 MiB L3 asked for 2 x 1.3 GB before the cap).
TEST_F(ReadMemory, BenchBandwidthProbeFitsTheMemoryAvailable) {
  const ChildRun r = run_spmv({"bench", "--backend", "cpu", "--gen", "poisson2d:n=30", "--algo", "row-loop", "--reps",
                               "7", "-q"},
                              dir_ / "err.txt", rlim_t{1} << 30);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LT(r.peak_mb, 1074.0);
}

}  // namespace
