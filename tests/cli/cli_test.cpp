// End-to-end tests of the `spmv` tool: each runs the built binary (SPMV_CLI_PATH) on files in a
// private temporary folder and checks exit codes, stdout/stderr and the files it writes.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "spmv/fem.hpp"
#include "spmv/matrix_market.hpp"
#include "spmv/operator.hpp"
#include "spmv/value_storage.hpp"

namespace {

namespace fs = std::filesystem;

struct CliResult {
  int exit_code = -1;
  std::string out, err;
};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The value of "key": ... in the flat JSON that `spmv info --json` prints (no nested objects there).
std::string json_value(const std::string& json, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(json, m, std::regex("\"" + key + "\": ([^,\\n}]+)"))) return "<missing>";
  return m[1];
}

std::size_t count_of(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) ++n;
  return n;
}

std::vector<std::string> split_csv_line(const std::string& line) {
  // The fields checked here (names, status) are never quoted; quoted ones are kept whole.
  std::vector<std::string> fields;
  std::string cur;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) fields.push_back(std::exchange(cur, {}));
    else cur += c;
  }
  fields.push_back(cur);
  return fields;
}

// Rows of a CSV file as column-name -> value maps.
std::vector<std::map<std::string, std::string>> read_csv(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  std::vector<std::map<std::string, std::string>> rows;
  if (!std::getline(in, line)) return rows;
  const auto header = split_csv_line(line);
  while (std::getline(in, line)) {
    const auto fields = split_csv_line(line);
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < header.size() && i < fields.size(); ++i) row[header[i]] = fields[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

#define EXPECT_OK(r) EXPECT_EQ((r).exit_code, 0) << "stdout:\n" << (r).out << "\nstderr:\n" << (r).err

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string path = SPMV_CLI_PATH;
    if (path.empty()) GTEST_SKIP() << "spmv_cli is not part of this build (SPMV_BUILD_CLI=OFF)";
    ASSERT_TRUE(fs::exists(path)) << "the spmv tool is missing at " << path << ": build the spmv_cli target first";
    cli_ = path;
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("spmv_cli_test_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty() && !HasFailure()) fs::remove_all(dir_);
  }

  fs::path file(const std::string& name) const { return dir_ / name; }

  CliResult run(const std::string& args) const {
    const fs::path out = dir_ / "stdout.txt", err = dir_ / "stderr.txt";
    const std::string command = "'" + cli_ + "' " + args + " >'" + out.string() + "' 2>'" + err.string() + "'";
    const int status = std::system(command.c_str());
    CliResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = read_file(out);
    r.err = read_file(err);
    return r;
  }

  // `spmv bench ARGS` on the CPU backend with quick timing and the rows written to out.csv: expects
  // exit code 0 and returns the rows (and the run in *result when asked).
  std::vector<std::map<std::string, std::string>> bench_rows(const std::string& args, CliResult* result = nullptr) const {
    const CliResult r = run("bench " + args + " --backend cpu --reps 7 --warmup 1 --min-sample-ms 0.2 --bandwidth 10 "
                            "--quiet --csv " + arg("out.csv"));
    EXPECT_OK(r);
    if (result) *result = r;
    return read_csv(file("out.csv"));
  }

  // A file in the temp folder, quoted for the shell.
  std::string arg(const std::string& name) const { return "'" + file(name).string() + "'"; }

  void write(const std::string& name, const std::string& text) const {
    std::ofstream(file(name), std::ios::binary) << text;
  }

  // [1 2 0; 0 3 0; 4 0 5]: small integers, so every product below is exact in float and double.
  void write_hand_matrix() const {
    write("hand.mtx",
          "%%MatrixMarket matrix coordinate real general\n"
          "3 3 5\n1 1 1\n1 2 2\n2 2 3\n3 1 4\n3 3 5\n");
    write("x.txt", "1\n2\n3\n");
  }

  std::string cli_;
  fs::path dir_;
};

TEST_F(Cli, GenListShowsKindsAndDefaults) {
  const CliResult r = run("gen --list");
  EXPECT_OK(r);
  EXPECT_NE(r.out.find("poisson2d"), std::string::npos);
  EXPECT_NE(r.out.find("rmat"), std::string::npos);
  EXPECT_NE(r.out.find("n=1000"), std::string::npos) << r.out;  // poisson2d's default size
}

TEST_F(Cli, GenThenInfoJson) {
  EXPECT_OK(run("gen poisson2d n=10 -o " + arg("p.mtx")));
  const CliResult r = run("info --json " + arg("p.mtx"));
  EXPECT_OK(r);
  for (const char* key : {"rows", "cols", "nnz", "row_mean", "row_std", "row_min", "row_max", "empty_rows",
                          "diagonals", "symmetric", "ell_padding", "bandwidth"})
    EXPECT_NE(json_value(r.out, key), "<missing>") << key << " in\n" << r.out;
  // 10 x 10 grid: 4 corners of 3 entries, 32 edge points of 4, 64 interior points of 5.
  EXPECT_EQ(json_value(r.out, "rows"), "100");
  EXPECT_EQ(json_value(r.out, "cols"), "100");
  EXPECT_EQ(json_value(r.out, "nnz"), "460");
  EXPECT_EQ(json_value(r.out, "row_min"), "3");
  EXPECT_EQ(json_value(r.out, "row_max"), "5");
  EXPECT_EQ(json_value(r.out, "empty_rows"), "0");
  EXPECT_EQ(json_value(r.out, "diagonals"), "5");
  EXPECT_EQ(json_value(r.out, "bandwidth"), "10");
  EXPECT_EQ(json_value(r.out, "symmetric"), "true");
  EXPECT_NEAR(std::stod(json_value(r.out, "row_mean")), 4.6, 1e-12);
  // Population variance (4*1.6^2 + 32*0.6^2 + 64*0.4^2) / 100 = 0.32.
  EXPECT_NEAR(std::stod(json_value(r.out, "row_std")), std::sqrt(0.32), 1e-12);

  const CliResult text = run("info " + arg("p.mtx"));
  EXPECT_OK(text);
  EXPECT_NE(text.out.find("460"), std::string::npos) << text.out;
}

TEST_F(Cli, ConvertToGzipKeepsTheMatrix) {
  EXPECT_OK(run("gen rmat scale=8 edge_factor=4 seed=3 -o " + arg("r.mtx")));
  EXPECT_OK(run("convert " + arg("r.mtx") + " " + arg("r.mtx.gz")));
  const std::string gz = read_file(file("r.mtx.gz"));
  ASSERT_GE(gz.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(gz[0]), 0x1f);  // gzip magic: the extension chose compression
  EXPECT_EQ(static_cast<unsigned char>(gz[1]), 0x8b);
  EXPECT_OK(run("convert " + arg("r.mtx.gz") + " " + arg("back.mtx")));
  EXPECT_EQ(read_file(file("back.mtx")).substr(0, 2), "%%");  // plain text again

  auto info_without_file = [&](const std::string& name) {
    const CliResult r = run("info --json " + arg(name));
    EXPECT_OK(r);
    return std::regex_replace(r.out, std::regex("\"file\": [^\\n]*\\n"), "");
  };
  const std::string original = info_without_file("r.mtx");
  EXPECT_EQ(original, info_without_file("r.mtx.gz"));
  EXPECT_EQ(original, info_without_file("back.mtx"));
  // The values survive exactly (17 significant digits), not just the statistics.
  const auto a = spmv::read_csr<double, std::int64_t>(file("r.mtx").string());
  const auto b = spmv::read_csr<double, std::int64_t>(file("back.mtx").string());
  EXPECT_EQ(a.row_ptr, b.row_ptr);
  EXPECT_EQ(a.col_idx, b.col_idx);
  EXPECT_EQ(a.values, b.values);
}

TEST_F(Cli, ConvertExpandsSymmetricToGeneral) {
  write("sym.mtx",
        "%%MatrixMarket matrix coordinate real symmetric\n"
        "3 3 4\n1 1 2\n2 1 -1\n3 2 -1\n3 3 2\n");
  EXPECT_OK(run("convert " + arg("sym.mtx") + " " + arg("gen.mtx")));
  const std::string text = read_file(file("gen.mtx"));
  EXPECT_NE(text.find("coordinate real general"), std::string::npos) << text;
  const CliResult r = run("info --json " + arg("gen.mtx"));
  EXPECT_OK(r);
  EXPECT_EQ(json_value(r.out, "nnz"), "6");  // both off-diagonal pairs stored
  EXPECT_EQ(json_value(r.out, "symmetric"), "true");
  EXPECT_EQ(json_value(r.out, "equals_transpose"), "true");
  EXPECT_EQ(json_value(r.out, "symmetry_violation"), "null");
}

TEST_F(Cli, InfoNamesTheEntryThatBreaksTheSymmetry) {
  write("skew.mtx",
        "%%MatrixMarket matrix coordinate real general\n"
        "3 3 4\n1 1 2\n2 1 -1\n1 2 -1.5\n3 3 2\n");
  const CliResult r = run("info " + arg("skew.mtx"));
  EXPECT_OK(r);
  EXPECT_NE(r.out.find("A != A^T exactly (entry (0, 1) = -1.5 but (1, 0) = -1)"), std::string::npos) << r.out;
  const CliResult j = run("info --json " + arg("skew.mtx"));
  EXPECT_EQ(json_value(j.out, "equals_transpose"), "false");
}

// Exact comparisons below are deliberate: the matrix, x, alpha, beta and y0 are small integers, so
// every product is computed without rounding in either precision.
TEST_F(Cli, MultiplyHandMatrix) {
  write_hand_matrix();
  EXPECT_OK(run("multiply " + arg("hand.mtx") + " --x " + arg("x.txt") + " -o " + arg("y.mtx")));
  EXPECT_EQ(spmv::read_vector(file("y.mtx").string()), (std::vector<double>{5, 6, 19}));

  // Without --x, x is all ones: y holds the row sums.
  EXPECT_OK(run("multiply " + arg("hand.mtx") + " -o " + arg("ones.mtx")));
  EXPECT_EQ(spmv::read_vector(file("ones.mtx").string()), (std::vector<double>{3, 3, 9}));

  // y = 2*A*x - y0 with y0 = x, in single precision, named algorithm.
  EXPECT_OK(run("multiply " + arg("hand.mtx") + " --x " + arg("x.txt") + " --y0 " + arg("x.txt") +
                " --alpha 2 --beta -1 --precision f32 --algo merge-parallel -o " + arg("axpby.mtx")));
  EXPECT_EQ(spmv::read_vector(file("axpby.mtx").string()), (std::vector<double>{9, 10, 35}));
}

TEST_F(Cli, MultiplyTranspose) {
  write_hand_matrix();
  for (const char* precision : {"f64", "f32"}) {
    SCOPED_TRACE(precision);
    EXPECT_OK(run("multiply " + arg("hand.mtx") + " --x " + arg("x.txt") + " --transpose --precision " + precision +
                  " -o " + arg("yt.mtx")));
    // A^T x = [1*1 + 4*3, 2*1 + 3*2, 5*3].
    EXPECT_EQ(spmv::read_vector(file("yt.mtx").string()), (std::vector<double>{13, 8, 15}));
  }
  // A rectangular matrix makes x and y lengths differ: 2 x 3, so A^T needs 2 entries in x.
  write("rect.mtx", "%%MatrixMarket matrix coordinate real general\n2 3 3\n1 1 1\n1 3 2\n2 2 3\n");
  write("x2.txt", "1\n10\n");
  EXPECT_OK(run("multiply " + arg("rect.mtx") + " --x " + arg("x2.txt") + " --transpose -o " + arg("yr.mtx")));
  EXPECT_EQ(spmv::read_vector(file("yr.mtx").string()), (std::vector<double>{1, 30, 2}));
}

// --semiring: hand.mtx = [[1 2 0] [0 3 0] [4 0 5]], x = [1 2 3].
// min-plus: row 1 min(1+1, 2+2) = 2, row 2 3+2 = 5, row 3 min(4+1, 5+3) = 5; an empty row gives inf,
// written as "inf" and read back. No alpha/beta/--y0 with a semiring other than plus-times, and --algo only for the
// backend's semiring kernels. With --backend cuda the device kernels (Auto's and each forced one, the formats
// included) give the same vectors (where a device is present; else a clear error).
TEST_F(Cli, MultiplySemiring) {
  write_hand_matrix();
  EXPECT_OK(run("multiply " + arg("hand.mtx") + " --x " + arg("x.txt") + " --semiring min-plus -o " + arg("mp.mtx")));
  EXPECT_EQ(spmv::read_vector(file("mp.mtx").string()), (std::vector<double>{2, 5, 5}));
  EXPECT_OK(run("multiply " + arg("hand.mtx") + " --x " + arg("x.txt") + " --semiring max-times --precision f32 -o " +
                arg("mt.mtx")));
  EXPECT_EQ(spmv::read_vector(file("mt.mtx").string()), (std::vector<double>{4, 6, 15}));
  // A^T min-plus x: column 1 min(1+1, 4+3) = 2, column 2 min(2+1, 3+2) = 3, column 3 5+3 = 8.
  EXPECT_OK(run("multiply " + arg("hand.mtx") + " --x " + arg("x.txt") + " --semiring min-plus --transpose -o " +
                arg("mpt.mtx")));
  EXPECT_EQ(spmv::read_vector(file("mpt.mtx").string()), (std::vector<double>{2, 3, 8}));
  // or-and on a pattern matrix with an empty row; max-min keeps the smaller of entry and x.
  write("pat.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n3 3\n");
  write("x01.txt", "1\n0\n1\n");
  EXPECT_OK(run("multiply " + arg("pat.mtx") + " --x " + arg("x01.txt") + " --semiring or-and -o " + arg("oa.mtx")));
  EXPECT_EQ(spmv::read_vector(file("oa.mtx").string()), (std::vector<double>{0, 0, 1}));
  EXPECT_OK(run("multiply " + arg("pat.mtx") + " --semiring min-plus -o " + arg("inf.mtx")));
  const auto with_inf = spmv::read_vector(file("inf.mtx").string());
  ASSERT_EQ(with_inf.size(), 3u);
  EXPECT_EQ(with_inf[0], 2);  // 1 + 1
  EXPECT_TRUE(std::isinf(with_inf[1]) && with_inf[1] > 0);  // the empty row
  EXPECT_EQ(with_inf[2], 2);
  for (const char* transpose : {"", " --transpose"}) {
    const std::string on_cuda = "multiply " + arg("hand.mtx") + " --x " + arg("x.txt") + " --semiring min-plus" +
                                transpose + " --backend cuda -o " + arg("mp_cuda.mtx");
    if (spmv::cuda_available()) {
      EXPECT_OK(run(on_cuda));
      EXPECT_EQ(spmv::read_vector(file("mp_cuda.mtx").string()),
                spmv::read_vector(file(*transpose ? "mpt.mtx" : "mp.mtx").string()));
    } else {
      const CliResult r = run(on_cuda);
      EXPECT_NE(r.exit_code, 0);
      EXPECT_NE(r.err.find("--backend cuda"), std::string::npos) << r.err;
    }
  }
  // The CPU kernels forced with --algo (the same values: min is exact in any order), and named on stderr.
  for (const char* algo :
       {"row-loop", "merge-parallel", "column-chunked", "sell", "ell", "ellr", "hyb", "coo", "dia", "compressed-csr"}) {
    const CliResult r = run("multiply " + arg("hand.mtx") + " --x " + arg("x.txt") + " --semiring min-plus --backend cpu " +
                            "--threads 2 --algo " + algo + " -o " + arg("mp_forced.mtx"));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find(std::string("semiring min-plus, ") + algo), std::string::npos) << r.err;
    EXPECT_EQ(spmv::read_vector(file("mp_forced.mtx").string()), (std::vector<double>{2, 5, 5})) << algo;
  }
  for (const char* algo : {"sell", "ell", "dia", "compressed-csr"}) {
    // The pattern matrix's empty row is all padding in SELL, ELL, DIA and compressed CSR's slice, and still gives
    // min-plus's inf.
    const CliResult r = run("multiply " + arg("pat.mtx") + " --semiring min-plus --backend cpu --algo " + algo +
                            " -o " + arg("inf_padded.mtx"));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(spmv::read_vector(file("inf_padded.mtx").string()), with_inf) << algo;
  }
  {  // Auto names its choice: the row loop on one thread (nothing to balance).
    const CliResult r = run("multiply " + arg("hand.mtx") + " --semiring or-and --backend cpu --threads 1 -o " +
                            arg("oa_auto.mtx"));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("semiring or-and, row-loop"), std::string::npos) << r.err;
  }
  // The CUDA kernels forced with --algo (SemiringPlan: the rows and merge-path kernels, SELL, the formats and the
  // SpMV's CSR kernels csr-scalar, csr-coop, CSR-Adaptive, LightSpMV, PCSR, Hola and segmented-sum, column-chunked,
  // ELLR-T and compressed CSR), named on stderr; the pattern matrix's empty row (all padding in SELL, ELL and DIA)
  // gives inf there too.
  for (const char* algo : {"csr-vector", "merge-path", "sell", "ell", "ellr", "hyb", "coo", "dia", "csr-scalar",
                           "csr-coop", "csr-adaptive", "lightspmv", "pcsr", "hola", "segmented-sum", "column-chunked",
                           "ellr-vector", "compressed-csr"}) {
    const std::string forced = "multiply " + arg("hand.mtx") + " --x " + arg("x.txt") + " --semiring min-plus " +
                               "--backend cuda --algo " + algo + " -o " + arg("mp_cuda_forced.mtx");
    const CliResult r = run(forced);
    if (!spmv::cuda_available()) {
      EXPECT_NE(r.exit_code, 0) << algo;
      EXPECT_NE(r.err.find("--backend cuda"), std::string::npos) << r.err;
      continue;
    }
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find(std::string("semiring min-plus, ") + algo), std::string::npos) << r.err;
    EXPECT_EQ(spmv::read_vector(file("mp_cuda_forced.mtx").string()), (std::vector<double>{2, 5, 5})) << algo;
    const CliResult p = run("multiply " + arg("pat.mtx") + " --semiring min-plus --backend cuda --algo " + algo +
                            " -o " + arg("inf_cuda.mtx"));
    EXPECT_EQ(p.exit_code, 0) << p.err;
    EXPECT_EQ(spmv::read_vector(file("inf_cuda.mtx").string()), with_inf) << algo;
  }
  {  // A CPU kernel with the CUDA backend: refused (by the backend's own check where there is no device).
    const CliResult r = run("multiply " + arg("hand.mtx") + " --semiring min-plus --backend cuda --algo merge-parallel");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.err.find(spmv::cuda_available() ? "--backend cpu" : "--backend cuda"), std::string::npos) << r.err;
  }
  for (const char* bad : {" --semiring plus-min", " --semiring min-plus --alpha 2",
                          " --semiring max-min --backend cpu --algo csr-vector",
                          " --semiring max-min --backend cpu --algo merge-path", " --semiring max-min --algo hola"}) {
    const CliResult r = run("multiply " + arg("hand.mtx") + bad);
    EXPECT_NE(r.exit_code, 0) << bad;
    EXPECT_NE(r.err.find("--semiring"), std::string::npos) << bad << ": " << r.err;
  }
}

TEST_F(Cli, MultiplyRejectsWrongVectorLength) {
  write_hand_matrix();
  write("short.txt", "1\n2\n");
  const CliResult r = run("multiply " + arg("hand.mtx") + " --x " + arg("short.txt"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--x"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("has 2 entries"), std::string::npos) << r.err;

  const CliResult beta = run("multiply " + arg("hand.mtx") + " --beta 1");
  EXPECT_NE(beta.exit_code, 0);
  EXPECT_NE(beta.err.find("--y0"), std::string::npos) << beta.err;
}

// --lma: the FEM problem solved matrix-free reaches the same solution (x = 1 within the tolerance's
// reach: |x - 1| <= cond * tol, cond(fem2d n=24) ~ 10^3, tol 1e-10); tune settles inside the solve.
TEST_F(Cli, SolveMatrixFreeAndTuned) {
  for (const std::string extra : {"--lma", "--algo tune", "--lma --method bicgstab", "--lma --method gmres"}) {
    SCOPED_TRACE(extra);
    const CliResult r = run("solve --gen fem2d:n=24 --backend cpu --tol 1e-10 " + extra + " -o " + arg("x.mtx"));
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find(extra.rfind("--lma", 0) == 0 ? "algorithm lma" : "tune("), std::string::npos) << r.out;
    for (double v : spmv::read_vector(file("x.mtx").string())) EXPECT_NEAR(v, 1.0, 1e-6);
  }
  const CliResult bad = run("solve --gen poisson2d:n=8 --lma --backend cpu");
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  EXPECT_NE(bad.err.find("--lma solves a FEM problem"), std::string::npos) << bad.err;
}

// Issue 15: the floor line, --unfused and --json; the fused and unfused CG take the same iterations.
TEST_F(Cli, SolveFloorUnfusedAndJson) {
  const CliResult fused = run("solve --gen poisson2d:n=20 --tol 1e-10 --backend cpu --bandwidth 50 --json " +
                              arg("fused.json"));
  EXPECT_EQ(fused.exit_code, 0) << fused.out << fused.err;
  EXPECT_NE(fused.out.find("floor "), std::string::npos) << fused.out;
  EXPECT_NE(fused.out.find("time/floor"), std::string::npos) << fused.out;
  EXPECT_NE(fused.out.find("given with --bandwidth"), std::string::npos) << fused.out;
  const CliResult unfused = run("solve --gen poisson2d:n=20 --tol 1e-10 --backend cpu --bandwidth 50 --unfused "
                                "--json " + arg("unfused.json"));
  EXPECT_EQ(unfused.exit_code, 0) << unfused.out << unfused.err;
  const auto field = [&](const std::string& name, const std::string& key) {
    const std::string text = read_file(file(name));
    const auto at = text.find("\"" + key + "\":");
    if (at == std::string::npos) return std::string("(missing)");
    const auto value = text.find_first_not_of(' ', at + key.size() + 3);
    return text.substr(value, 12);
  };
  EXPECT_EQ(field("fused.json", "iterations"), field("unfused.json", "iterations"));
  EXPECT_NE(field("fused.json", "variant").find("\"fused\""), std::string::npos) << field("fused.json", "variant");
  EXPECT_NE(field("unfused.json", "variant").find("\"unfused\""), std::string::npos);
  // 400 rows in f64: fused 10 words, unfused 11.
  EXPECT_EQ(field("fused.json", "vector_bytes").substr(0, 5), "32000");
  EXPECT_EQ(field("unfused.json", "vector_bytes").substr(0, 5), "35200");
  EXPECT_EQ(field("fused.json", "bandwidth_gbs").substr(0, 4), "50.0");
  const CliResult graph = run("solve --gen poisson2d:n=8 --backend cpu --graph --bandwidth 1");
  EXPECT_EQ(graph.exit_code, 1) << graph.out;
  EXPECT_NE(graph.err.find("graph"), std::string::npos) << graph.err;
}

// --gmres-s-step: s-step GMRES named in the header, converged to the known solution; the JSON records S and
// the variant the blocks; outside 1..8, with a compressed basis or with another method it is refused.
TEST_F(Cli, SolveGmresSStep) {
  CliResult r = run("solve --gen poisson2d:n=20 --method gmres --restart 12 --gmres-s-step 5 --precond jacobi "
                    "--tol 1e-10 --backend cpu --json " + arg("s.json") + " -o " + arg("xs.mtx"));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("gmres(12), s-step 5"), std::string::npos) << r.out;
  for (double v : spmv::read_vector(file("xs.mtx").string())) EXPECT_NEAR(v, 1.0, 1e-7);
  const std::string json = read_file(file("s.json"));
  EXPECT_NE(json.find("\"gmres_s_step\": 5"), std::string::npos) << json;
  EXPECT_NE(json.find("\"variant\": \"s-step 5, "), std::string::npos) << json;
  for (const char* bad : {"--gmres-s-step 9", "--gmres-s-step 0"})
    EXPECT_NE(run(std::string("solve --gen poisson2d:n=8 --method gmres --backend cpu ") + bad).exit_code, 0) << bad;
  r = run("solve --gen poisson2d:n=8 --method gmres --gmres-s-step 4 --gmres-basis f32 --backend cpu");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("s-step basis"), std::string::npos) << r.err;
  r = run("solve --gen poisson2d:n=8 --gmres-s-step 4 --backend cpu");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("gmres option"), std::string::npos) << r.err;
}

TEST_F(Cli, SolveWithKnownSolutionProgressAndExitCodes) {
  // b = A*1: the summary prints the max error against the known solution.
  CliResult r = run("solve --gen poisson2d:n=20 --precond jacobi --tol 1e-10 --progress 10 --backend cpu -o " +
                    arg("x.mtx"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("cg: converged after"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("iteration     10  residual"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("max error |x - 1|_inf"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("SpMV share"), std::string::npos) << r.out;
  for (double v : spmv::read_vector(file("x.mtx").string())) EXPECT_NEAR(v, 1.0, 1e-7);

  // Not converged within --maxit: exit code 3, x still written.
  r = run("solve --gen poisson2d:n=20 --method gmres --restart 5 --maxit 4 --backend cpu -o " + arg("x4.mtx"));
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("NOT converged"), std::string::npos) << r.out;
  EXPECT_EQ(spmv::read_vector(file("x4.mtx").string()).size(), 400u);

  // A breakdown (CG on an indefinite matrix) is exit code 3 with its reason.
  write("indef.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 -1\n");
  write("b2.txt", "1\n1\n");
  r = run("solve " + arg("indef.mtx") + " --rhs " + arg("b2.txt") + " --backend cpu");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.out.find("p.Ap <= 0"), std::string::npos) << r.out;

  // Bad input: an error (exit 1) naming the problem.
  write("nan.txt", "1\nnan\n");
  r = run("solve " + arg("indef.mtx") + " --rhs " + arg("nan.txt") + " --backend cpu");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("b holds NaN or Inf at row 1"), std::string::npos) << r.err;
  write("rect.mtx", "%%MatrixMarket matrix coordinate real general\n2 3 1\n1 1 1\n");
  r = run("solve " + arg("rect.mtx") + " --backend cpu");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("square"), std::string::npos) << r.err;
}

TEST_F(Cli, BenchAllAlgorithmsWritesVerifiedCsv) {
  EXPECT_OK(run("gen poisson2d n=20 -o " + arg("p.mtx")));
  const CliResult r =
      run("bench " + arg("p.mtx") + " --backend cpu --algo all --reps 7 --warmup 1 --min-sample-ms 0.2 --csv " +
          arg("out.csv"));
  EXPECT_OK(r);
  // Statistics come before the table.
  EXPECT_NE(r.out.find("400 x 400, 1920 nonzeros"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("copy bandwidth"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("[1/"), std::string::npos) << "progress lines expected on stderr:\n" << r.err;

  const auto rows = read_csv(file("out.csv"));
  const auto offered = spmv::backend_algorithms(spmv::Backend::Cpu, spmv::Operation::NonTranspose);
  ASSERT_EQ(rows.size(), offered.size());
  int verified = 0;
  for (const auto& row : rows) {
    SCOPED_TRACE(row.at("algorithm"));
    EXPECT_EQ(row.at("matrix"), "p");
    EXPECT_EQ(row.at("nnz"), "1920");
    EXPECT_EQ(row.at("precision"), "f64");
    EXPECT_EQ(row.at("op"), "N");
    // poisson2d is padding-friendly, so no format refuses it: every row must verify and be timed.
    EXPECT_EQ(row.at("verified"), "ok") << row.at("message");
    EXPECT_LE(std::stod(row.at("error_ratio")), 1.0);
    EXPECT_GT(std::stod(row.at("median_ms")), 0.0);
    EXPECT_GT(std::stod(row.at("gflops")), 0.0);
    EXPECT_GT(std::stod(row.at("bandwidth_gbs")), 0.0);
    // Minimal byte model, f64 / int32: 1920*12 + 401*4 + 400*8 + 400*8.
    EXPECT_EQ(row.at("model_bytes"), std::to_string(1920 * 12 + 401 * 4 + 400 * 8 + 400 * 8));
    EXPECT_FALSE(row.at("date").empty());
    EXPECT_NE(row.at("command_line").find("bench"), std::string::npos);
    verified += row.at("verified") == "ok";
  }
  std::vector<std::string> names;
  for (const auto& row : rows) names.push_back(row.at("algorithm"));
  for (spmv::Algorithm a : offered)
    EXPECT_NE(std::find(names.begin(), names.end(), std::string(spmv::to_string(a))), names.end())
        << spmv::to_string(a) << " missing from the CSV";
  EXPECT_EQ(verified, static_cast<int>(rows.size()));

  // A second run appends rows under the same header.
  EXPECT_OK(run("bench " + arg("p.mtx") + " --backend cpu --algo reference --reps 7 --bandwidth 10 --quiet --csv " +
                arg("out.csv")));
  EXPECT_EQ(read_csv(file("out.csv")).size(), offered.size() + 1);
}

TEST_F(Cli, BenchTransposeBothPrecisionsJson) {
  const CliResult r = run(
      "bench --gen long_rows:rows=500,cols=700,long_rows=2,long_length=600,short_length=3 --backend cpu --transpose "
      "--precision both --alpha -2 --beta 0.5 --reps 7 --warmup 1 --min-sample-ms 0.2 --bandwidth 10 --quiet "
      "--json " + arg("out.json") + " --csv " + arg("out.csv"));
  EXPECT_OK(r);
  EXPECT_TRUE(r.err.find("[1/") == std::string::npos) << "--quiet must hide progress:\n" << r.err;
  const std::string json = read_file(file("out.json"));
  EXPECT_NE(json.find("\"runs\""), std::string::npos);
  EXPECT_NE(json.find("\"byte_model\""), std::string::npos);
  EXPECT_NE(json.find("\"row_mean\""), std::string::npos);
  EXPECT_EQ(json.find("\"FAILED\""), std::string::npos) << json;

  // Default algorithms: auto plus the vendor baselines, in both precisions, all transposed.
  const auto rows = read_csv(file("out.csv"));
  ASSERT_FALSE(rows.empty());
  int autos = 0;
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("op"), "T");
    EXPECT_TRUE(row.at("algorithm") == "auto" || row.at("vendor") == "1") << row.at("algorithm");
    EXPECT_EQ(row.at("verified"), "ok") << row.at("message");
    // With beta != 0 the byte model reads y too; x has rows (500) and y cols (700) entries for A^T.
    const std::size_t value = row.at("precision") == "f32" ? 4 : 8;
    const std::size_t nnz = std::stoul(row.at("nnz"));
    EXPECT_EQ(std::stoul(row.at("model_bytes")), nnz * (value + 4) + 501 * 4 + 500 * value + 2 * 700 * value);
    autos += row.at("algorithm") == "auto";
  }
  EXPECT_EQ(autos, 2);  // f64 and f32

  // Appending a second run to the JSON keeps the first.
  EXPECT_OK(run("bench --gen poisson2d:n=8 --backend cpu --algo reference --reps 7 --bandwidth 10 --quiet --json " +
                arg("out.json")));
  const std::string twice = read_file(file("out.json"));
  EXPECT_EQ(std::regex_search(twice, std::regex("\"format\": \"spmv-bench/1\"")), true);
  EXPECT_EQ(count_of(twice, "\"command_line\""), 2u);
  EXPECT_NE(twice.find("long_rows"), std::string::npos);
  EXPECT_NE(twice.find("poisson2d:n=8"), std::string::npos);
}

// --profile reads GPU counters: on the CPU backend it is a usage error, not silently empty columns.
TEST_F(Cli, BenchProfileNeedsTheCudaBackend) {
  const CliResult r = run("bench --gen poisson2d:n=8 --backend cpu --profile --reps 7 --bandwidth 10 --quiet");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("--profile reads GPU counters"), std::string::npos) << r.err;
}

// --k: SpMM rows (on the CPU spmv's SpMM and its k-SpMV baseline), verified, k and layout in the policy.
TEST_F(Cli, BenchSpmmRowsOnTheCpu) {
  const CliResult r = run("bench --gen poisson2d:n=20 --backend cpu --k 5 --layout col --beta 0.5 --transpose "
                          "--precision both --reps 7 --min-sample-ms 0.1 --bandwidth 10 --quiet --csv " + arg("spmm.csv"));
  EXPECT_OK(r);
  const auto rows = read_csv(file("spmm.csv"));
  ASSERT_EQ(rows.size(), 4u);  // (k-spmv, spmm) x (f64, f32)
  for (const auto& row : rows) {
    EXPECT_EQ(row.at("verified"), "ok") << row.at("algorithm") << ": " << row.at("message");
    EXPECT_EQ(row.at("op"), "T");
    EXPECT_EQ(row.at("policy").rfind("k=5 column-major;", 0), 0u) << row.at("policy");
  }
  EXPECT_EQ(rows[0].at("algorithm"), "k-spmv");
  EXPECT_EQ(rows[1].at("algorithm"), "spmm");
  EXPECT_EQ(rows[1].at("vendor_baseline"), "k-spmv");
  const CliResult refused = run("bench --gen poisson2d:n=8 --backend cpu --k 4 --algo auto --reps 7 --bandwidth 10");
  EXPECT_EQ(refused.exit_code, 1) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("--k runs spmv's SpMM"), std::string::npos) << refused.err;
}

// --subwarp (CUDA lanes per row; the CPU algorithms have none): accepted and verified on the CPU, and a
// negative width is refused naming the option.
TEST_F(Cli, BenchSubwarpOption) {
  EXPECT_OK(run("bench --gen poisson2d:n=8 --backend cpu --algo row-loop --subwarp 8 --reps 7 --bandwidth 10 --quiet"));
  const CliResult refused = run("bench --gen poisson2d:n=8 --backend cpu --subwarp -2 --reps 7 --bandwidth 10");
  EXPECT_NE(refused.exit_code, 0) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("--subwarp"), std::string::npos) << refused.err;
}

// --sell-c / --sell-sigma reach SELL's plan (its policy names them), and a window that is not a multiple
// of the slice height is reported on the row, naming the option's field.
TEST_F(Cli, BenchSellOptions) {
  EXPECT_OK(run("bench --gen poisson2d:n=20 --backend cpu --algo sell --sell-c 4 --sell-sigma 400 --reps 7 "
                "--bandwidth 10 --quiet --csv " + arg("sell.csv")));
  const auto rows = read_csv(file("sell.csv"));
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].at("verified"), "ok") << rows[0].at("message");
  EXPECT_NE(rows[0].at("policy").find("C=4 sigma=400"), std::string::npos) << rows[0].at("policy");
  run("bench --gen poisson2d:n=20 --backend cpu --algo sell --sell-c 8 --sell-sigma 12 --reps 7 --bandwidth 10 "
      "--quiet --csv " + arg("bad.csv"));
  const auto bad = read_csv(file("bad.csv"));
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_NE(bad[0].at("verified"), "ok");
  EXPECT_NE(bad[0].at("message").find("sell_sigma"), std::string::npos) << bad[0].at("message");
}

TEST_F(Cli, BenchVerificationFailureIsLoudAndFails) {
  const CliResult r = run("bench --gen poisson2d:n=8 --backend cpu --algo reference,row-loop --reps 7 "
                          "--bandwidth 10 --quiet --inject-fault --csv " + arg("out.csv"));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("VERIFICATION FAILED"), std::string::npos) << r.err;
  const auto rows = read_csv(file("out.csv"));
  ASSERT_EQ(rows.size(), 2u);  // the second row still ran after the first failed
  for (const auto& row : rows) EXPECT_EQ(row.at("verified"), "FAILED");
}

// --lma: the CSR rows on the assembled matrix, then one verified and timed LMA row with its own byte
// model; a broken product fails it; a matrix that is not a FEM problem is refused.
TEST_F(Cli, BenchLmaRowNextToTheCsrRows) {
  const CliResult r = run("bench --gen fem2d:n=9 --gen fem3d:n=4 --lma --backend cpu --algo row-loop --precision both "
                          "--beta 0.5 --reps 7 --warmup 1 --min-sample-ms 0.2 --bandwidth 10 --quiet --csv " +
                          arg("out.csv"));
  EXPECT_OK(r);
  const auto rows = read_csv(file("out.csv"));
  ASSERT_EQ(rows.size(), 8u);  // 2 problems x 2 precisions x (row-loop, lma)
  for (const auto& row : rows) {
    SCOPED_TRACE(row.at("matrix") + " " + row.at("precision") + " " + row.at("algorithm"));
    EXPECT_EQ(row.at("verified"), "ok") << row.at("message");
    EXPECT_GT(std::stod(row.at("gflops")), 0.0);
  }
  // fem2d n=9: 64 unknowns; the byte model of the f64 / int32 row:
  // elements * (9 * 8 + 3 * 4) + 3 * 64 * 8 (x, y written, y read for beta != 0).
  const auto elements = spmv::fem::sizes({2, 9, 0.5, 0.05}).elements;
  EXPECT_EQ(rows[1].at("algorithm"), "lma");
  EXPECT_EQ(rows[1].at("model_bytes"), std::to_string(elements * (9 * 8 + 3 * 4) + 3 * 64 * 8));

  const CliResult fault = run("bench --gen fem2d:n=6 --lma --backend cpu --algo row-loop --reps 7 --bandwidth 10 "
                              "--quiet --inject-fault");
  EXPECT_EQ(fault.exit_code, 2) << fault.out << fault.err;
  EXPECT_NE(fault.err.find("VERIFICATION FAILED: lma"), std::string::npos) << fault.err;

  const CliResult refused = run("bench --gen poisson2d:n=6 --lma --backend cpu");
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("--lma runs on FEM problems"), std::string::npos) << refused.err;
}

TEST_F(Cli, BenchSkipsRefusedFormats) {
  // One row of 300 entries among rows of 1: ELL would pad far beyond the allowed factor.
  const CliResult r = run("bench --gen long_rows:rows=400,cols=400,long_rows=1,long_length=300,short_length=1 "
                          "--backend cpu --algo ell,row-loop --reps 7 --bandwidth 10 --quiet --csv " + arg("out.csv"));
  EXPECT_OK(r);
  EXPECT_NE(r.out.find("skipped: "), std::string::npos) << r.out;
  const auto rows = read_csv(file("out.csv"));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("verified"), "skipped");
  EXPECT_FALSE(rows[0].at("message").empty());
  EXPECT_EQ(rows[1].at("verified"), "ok");
}

// --precision f16 / bf16 (issue 11): the float path with half-precision values. On the CPU the row loop
// and auto offer it: verified rows (against the matrix rounded to the storage) with the precision's name,
// the storage rounding column within its bound and values at 2 bytes in the byte model; an algorithm
// without half storage is a skipped row, and the run still exits 0.
TEST_F(Cli, BenchHalfPrecisionRows) {
  CliResult r;
  const auto rows = bench_rows("--gen random_uniform:rows=400,cols=400,per_row=6 --precision f16 "
                               "--algo auto,row-loop,coo --json " + arg("out.json"), &r);
  EXPECT_NE(r.out.find("[random_uniform:cols=400,per_row=6,rows=400, f16]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("vs f32 (bound)"), std::string::npos) << r.out;
  ASSERT_EQ(rows.size(), 3u);
  for (const auto& row : rows) {
    SCOPED_TRACE(row.at("algorithm"));
    EXPECT_EQ(row.at("precision"), "f16");
    if (row.at("algorithm") == "coo") {
      EXPECT_EQ(row.at("verified"), "skipped");
      EXPECT_FALSE(row.at("message").empty());
      continue;
    }
    EXPECT_EQ(row.at("verified"), "ok") << row.at("message");
    EXPECT_LE(std::stod(row.at("error_ratio")), 1.0);
    // The storage rounding: above f32's eps (values in [-1, 1) are rarely fp16 numbers), within
    // u + c*eps*(1 + u), c = 2*(6 + 2).
    const double storage_error = std::stod(row.at("storage_error")), bound = std::stod(row.at("storage_bound"));
    EXPECT_NEAR(bound, 0x1p-11 + 16 * 0x1p-23 * (1 + 0x1p-11), 1e-9);
    EXPECT_GT(storage_error, 0x1p-23);
    EXPECT_LE(storage_error, bound);
    // 2 bytes per value, 4 per index and per x and y entry: 2400*6 + 401*4 + 400*4 + 400*4.
    EXPECT_EQ(row.at("model_bytes"), std::to_string(2400 * 6 + 401 * 4 + 400 * 4 + 400 * 4));
  }
  const std::string json = read_file(file("out.json"));
  EXPECT_NE(json.find("\"storage_error\""), std::string::npos);
  EXPECT_NE(json.find("\"precision\": \"f16\""), std::string::npos);
}

// A comma-separated list runs each precision in turn: f32 rows carry no storage figures, bf16's bound
// is that of its 8 significant bits.
TEST_F(Cli, BenchPrecisionListWithBf16) {
  const auto rows = bench_rows("--gen random_uniform:rows=300,cols=300,per_row=6 --precision f32,bf16 --algo row-loop");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].at("precision"), "f32");
  EXPECT_EQ(rows[0].at("verified"), "ok") << rows[0].at("message");
  EXPECT_TRUE(rows[0].at("storage_error").empty());
  EXPECT_EQ(rows[1].at("precision"), "bf16");
  EXPECT_EQ(rows[1].at("verified"), "ok") << rows[1].at("message");
  EXPECT_LE(std::stod(rows[1].at("storage_error")), std::stod(rows[1].at("storage_bound")));
  EXPECT_GT(std::stod(rows[1].at("storage_bound")), 0x1p-8);
  EXPECT_GT(std::stod(rows[1].at("storage_error")), 0x1p-11);  // bf16 rounds far more than f16 would
}

// multiply --precision f16 / bf16: y is the product of the matrix rounded to the storage, in f32.
TEST_F(Cli, MultiplyHalfPrecisionValues) {
  write("tenth.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 0.1\n2 2 3\n");
  for (const auto& [name, storage] : {std::pair{"f16", spmv::ValueStorage::F16},
                                      std::pair{"bf16", spmv::ValueStorage::Bf16}}) {
    SCOPED_TRACE(name);
    EXPECT_OK(run("multiply " + arg("tenth.mtx") + " --backend cpu --precision " + name + " -o " + arg("y.mtx")));
    // x = 1: y = the stored values, 0.1 rounded to the storage (3 is exact in both).
    const std::vector<double> expected{spmv::round_to_storage(0.1f, storage), 3.0};
    EXPECT_EQ(spmv::read_vector(file("y.mtx").string()), expected);
    EXPECT_NE(expected[0], static_cast<double>(0.1f));
  }
}

// A generated matrix beyond --max-memory is refused before it exists, naming both sizes; the run
// goes on with the next matrix and exits 1.
TEST_F(Cli, BenchRefusesAGeneratorBeyondMaxMemory) {
  const CliResult r = run("bench --gen poisson3d:n=60 --gen poisson2d:n=8 --backend cpu --algo row-loop "
                          "--precision both --max-memory 2M --reps 7 --bandwidth 10 --quiet --csv " + arg("out.csv"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("poisson3d: the 216000 x 216000 matrix with 1490400 nonzeros (double values, 32-bit indices) "
                       "needs 18.7 MB, more than the max_memory limit of 2.0 MB"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("(float values, 32-bit indices) needs 12.8 MB"), std::string::npos) << r.err;
  const auto rows = read_csv(file("out.csv"));
  ASSERT_EQ(rows.size(), 2u);  // poisson2d in f64 and f32
  for (const auto& row : rows) EXPECT_EQ(row.at("verified"), "ok");
}

TEST_F(Cli, BadInputsFailWithAMessage) {
  struct Case {
    std::string args, expected_in_stderr;
  };
  write("malformed.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n7 1 2.0\n");
  write("notmm.mtx", "hello\n");
  write_hand_matrix();
  const std::vector<Case> cases{
      {"info " + arg("missing.mtx"), "missing.mtx"},
      {"info " + arg("malformed.mtx"), "malformed.mtx"},
      {"info " + arg("notmm.mtx"), "notmm.mtx"},
      {"bench " + arg("missing.mtx") + " --backend cpu", "missing.mtx"},
      {"multiply " + arg("hand.mtx") + " --x " + arg("missing_x.txt"), "missing_x.txt"},
      {"multiply " + arg("hand.mtx") + " --algo nosuchalgo", "unknown algorithm 'nosuchalgo'"},
      {"bench --gen poisson2d:n=4 --backend cpu --algo nosuchalgo", "unknown algorithm 'nosuchalgo'"},
      {"gen nosuchgen -o " + arg("g.mtx"), "nosuchgen"},
      {"bench --gen nosuchgen --backend cpu", "unknown generator 'nosuchgen'"},
      {"gen poisson2d n=abc -o " + arg("g.mtx"), "abc"},
      {"bench --gen poisson2d:nn=4 --backend cpu", "no parameter 'nn'"},
      {"bench --gen poisson2d:n=4 --backend cpu --reps 2", "--reps"},
      {"bench --gen poisson2d:n=4 --backend cpu --precision f8", "unknown precision 'f8'"},
      {"bench --gen poisson2d:n=4 --backend cpu --precision f32,half", "unknown precision 'half'"},
      {"bench --gen poisson2d:n=4 --backend cpu --precision f16 --k 4", "--k (SpMM) runs f32 and f64 only"},
      {"multiply " + arg("hand.mtx") + " --precision f8", "--precision"},
      {"nosuchcommand", "nosuchcommand"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args);
    const CliResult r = run(c.args);
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.err.find(c.expected_in_stderr), std::string::npos) << "stderr:\n" << r.err;
    EXPECT_EQ(r.err.find("terminate called"), std::string::npos) << r.err;
  }
  // A line number points at the bad entry.
  EXPECT_NE(run("info " + arg("malformed.mtx")).err.find(":4"), std::string::npos);
}

}  // namespace
