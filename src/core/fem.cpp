// The FEM problem generator (P1 on a distorted Kuhn simplex mesh of the unit square / cube), its
// double-precision LMA oracle, the element colouring both LMA backends run, and the backend switch of
// make_lma_operator. See include/spmv/fem.hpp for the discretisation.
#include "spmv/fem.hpp"

#include <algorithm>
#include <array>
#include <bitset>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <string>

#include "core/memory_budget.hpp"
#include "spmv/error.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace spmv::fem {
namespace {

constexpr int kMaxDim = 3;
constexpr int kMaxNodes = kMaxDim + 1;
constexpr int kMaxSimplices = 6;  // 3! tetrahedra per cube

using Point = std::array<std::int64_t, kMaxDim>;  // grid coordinates of a node or a cell corner

int factorial(int d) { return d == 2 ? 2 : 6; }

// The permutations of the axes in lexicographic order: simplex t of a cell walks from the cell's
// corner along axes perm[t][0], perm[t][1], ... (Kuhn's triangulation; every cell uses the same
// order, so faces match between cells).
const std::array<int, kMaxDim>& permutation(int dim, int t) {
  static const std::array<std::array<int, kMaxDim>, 2> p2{{{0, 1, 0}, {1, 0, 0}}};
  static const std::array<std::array<int, kMaxDim>, kMaxSimplices> p3{
      {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}};
  return dim == 2 ? p2[t] : p3[t];
}

// +1 for even permutations: the sign of the simplex's reference Jacobian determinant.
int permutation_sign(int dim, int t) {
  if (dim == 2) return t == 0 ? 1 : -1;
  static constexpr std::array<int, kMaxSimplices> sign{1, -1, -1, 1, 1, -1};
  return sign[t];
}

struct Grid {
  int dim;
  std::int64_t n;  // cells per side
  std::int64_t m;  // interior nodes per side, n - 1

  std::int64_t cells() const { return dim == 2 ? n * n : n * n * n; }
  Point cell(std::int64_t c) const {
    Point p{c % n, (c / n) % n, dim == 3 ? c / (n * n) : 0};
    return p;
  }
  // The unknown at a node, -1 on the boundary.
  std::int64_t unknown(const Point& q) const {
    std::int64_t u = 0, stride = 1;
    for (int k = 0; k < dim; ++k) {
      if (q[k] <= 0 || q[k] >= n) return -1;
      u += (q[k] - 1) * stride;
      stride *= m;
    }
    return u;
  }
  Point node_of_unknown(std::int64_t u) const {
    Point q{0, 0, 0};
    for (int k = 0; k < dim; ++k) {
      q[k] = u % m + 1;
      u /= m;
    }
    return q;
  }
  // Vertex a of simplex t of the cell with corner c.
  Point vertex(const Point& c, int t, int a) const {
    Point v = c;
    const auto& perm = permutation(dim, t);
    for (int k = 0; k < a; ++k) ++v[perm[k]];
    return v;
  }
};

// sin(pi i / n) and sin(2 pi i / n) for the grid lines i = 0..n: the distortion is a product of them,
// so positions cost no sine (the 3D assembly evaluates each element 2 x 4 times).
struct GridSines {
  std::vector<double> pi, two_pi;
  explicit GridSines(std::int64_t n) {
    for (std::int64_t i = 0; i <= n; ++i) {
      const double xi = static_cast<double>(i) / static_cast<double>(n);
      pi.push_back(std::sin(std::numbers::pi * xi));
      two_pi.push_back(std::sin(2 * std::numbers::pi * xi));
    }
  }
};

// Physical position of a grid node under the boundary-preserving distortion (fem.hpp).
std::array<double, kMaxDim> position(const Grid& g, const GridSines& sines, const Point& q, double distortion) {
  std::array<double, kMaxDim> x{0, 0, 0};
  for (int k = 0; k < g.dim; ++k) {
    double bump = sines.two_pi[q[k]];
    for (int m = 0; m < g.dim; ++m)
      if (m != k) bump *= sines.pi[q[m]];
    x[k] = static_cast<double>(q[k]) / static_cast<double>(g.n) + distortion * bump;
  }
  return x;
}

double kappa(int dim, const std::array<double, kMaxDim>& x, double amplitude) {
  constexpr double pi = std::numbers::pi;
  double s = 1;
  for (int k = 0; k < dim; ++k) s *= std::sin(2 * pi * x[k]);
  return 1 + amplitude * s;
}

struct ElementMatrix {
  std::array<std::array<double, kMaxNodes>, kMaxNodes> k{};
  bool oriented = true;  // the map kept the simplex's orientation (always, within the parameter bounds)
};

// K[a][b] = kappa(centroid) * |T| * grad phi_a . grad phi_b. With J = [x_1 - x_0, ..., x_d - x_0],
// grad phi_k (k >= 1) is row k - 1 of J^{-1} and grad phi_0 = -sum of the others; |T| = |det J| / d!.
ElementMatrix element_matrix(const Grid& g, const GridSines& sines, const MeshParams& mp, const Point& corner, int t) {
  const int d = g.dim;
  std::array<std::array<double, kMaxDim>, kMaxNodes> x{};
  for (int a = 0; a <= d; ++a) x[a] = position(g, sines, g.vertex(corner, t, a), mp.distortion);
  double j[kMaxDim][kMaxDim] = {};  // j[r][c] = (x_{c+1} - x_0)_r
  for (int c = 0; c < d; ++c)
    for (int r = 0; r < d; ++r) j[r][c] = x[c + 1][r] - x[0][r];
  double inv[kMaxDim][kMaxDim] = {};
  double det;
  if (d == 2) {
    det = j[0][0] * j[1][1] - j[0][1] * j[1][0];
    inv[0][0] = j[1][1] / det;
    inv[0][1] = -j[0][1] / det;
    inv[1][0] = -j[1][0] / det;
    inv[1][1] = j[0][0] / det;
  } else {
    // Cofactors: inv = adj(J) / det.
    const double c00 = j[1][1] * j[2][2] - j[1][2] * j[2][1];
    const double c01 = j[1][2] * j[2][0] - j[1][0] * j[2][2];
    const double c02 = j[1][0] * j[2][1] - j[1][1] * j[2][0];
    det = j[0][0] * c00 + j[0][1] * c01 + j[0][2] * c02;
    inv[0][0] = c00 / det;
    inv[1][0] = c01 / det;
    inv[2][0] = c02 / det;
    inv[0][1] = (j[0][2] * j[2][1] - j[0][1] * j[2][2]) / det;
    inv[1][1] = (j[0][0] * j[2][2] - j[0][2] * j[2][0]) / det;
    inv[2][1] = (j[0][1] * j[2][0] - j[0][0] * j[2][1]) / det;
    inv[0][2] = (j[0][1] * j[1][2] - j[0][2] * j[1][1]) / det;
    inv[1][2] = (j[0][2] * j[1][0] - j[0][0] * j[1][2]) / det;
    inv[2][2] = (j[0][0] * j[1][1] - j[0][1] * j[1][0]) / det;
  }
  ElementMatrix out;
  out.oriented = det * permutation_sign(d, t) > 0;
  std::array<std::array<double, kMaxDim>, kMaxNodes> grad{};
  for (int a = 1; a <= d; ++a)
    for (int r = 0; r < d; ++r) {
      grad[a][r] = inv[a - 1][r];
      grad[0][r] -= inv[a - 1][r];
    }
  std::array<double, kMaxDim> centroid{0, 0, 0};
  for (int a = 0; a <= d; ++a)
    for (int r = 0; r < d; ++r) centroid[r] += x[a][r] / (d + 1);
  const double scale = kappa(d, centroid, mp.kappa_amplitude) * std::abs(det) / factorial(d);
  for (int a = 0; a <= d; ++a)
    for (int b = 0; b <= d; ++b) {
      double s = 0;
      for (int r = 0; r < d; ++r) s += grad[a][r] * grad[b][r];
      out.k[a][b] = scale * s;  // the same expression for (a, b) and (b, a): exactly symmetric
    }
  return out;
}

// Offsets between nodes that share a simplex: 0 and +-v for the 0/1 vectors v != 0 that are
// consecutive sums of a permutation's axes, i.e. every nonzero 0/1 vector in the Kuhn mesh.
std::vector<Point> neighbour_offsets(int dim) {
  std::vector<Point> out;
  const int corners = 1 << dim;
  out.push_back({0, 0, 0});
  for (int bits = 1; bits < corners; ++bits) {
    Point v{0, 0, 0}, w{0, 0, 0};
    for (int k = 0; k < dim; ++k) {
      v[k] = (bits >> k) & 1;
      w[k] = -v[k];
    }
    out.push_back(v);
    out.push_back(w);
  }
  return out;
}

std::int64_t power(std::int64_t b, int e) {
  std::int64_t r = 1;
  for (int k = 0; k < e; ++k) r *= b;
  return r;
}

int thread_count(const BuildOptions& options) {
#ifdef _OPENMP
  return options.threads > 0 ? options.threads : omp_get_max_threads();
#else
  (void)options;
  return 1;
#endif
}

bool cell_has_unknown_vertex(const Grid& g, const Point& corner, int t) {
  for (int a = 0; a <= g.dim; ++a)
    if (g.unknown(g.vertex(corner, t, a)) >= 0) return true;
  return false;
}

}  // namespace

void mesh_params_check(const MeshParams& mp) {
  if (mp.dim != 2 && mp.dim != 3)
    throw InvalidArgument("fem: dim = " + std::to_string(mp.dim) + " must be 2 or 3");
  if (mp.n < 1) throw InvalidArgument("fem: n = " + std::to_string(mp.n) + " must be >= 1");
  if (mp.n > (mp.dim == 2 ? 2000000000LL : 1000000LL))  // n^dim * dim! must not overflow int64
    throw Unsupported("fem: n = " + std::to_string(mp.n) + " is too large");
  if (!(std::abs(mp.kappa_amplitude) < 1))
    throw InvalidArgument("fem: kappa_amplitude = " + std::to_string(mp.kappa_amplitude) +
                          " must satisfy |a| < 1 (kappa stays positive)");
  if (!(mp.distortion >= 0 && mp.distortion <= 0.05))
    throw InvalidArgument("fem: distortion = " + std::to_string(mp.distortion) +
                          " must be in [0, 0.05] (larger ones may invert elements)");
}

Sizes sizes(const MeshParams& mp) {
  mesh_params_check(mp);
  const Grid g{mp.dim, mp.n, mp.n - 1};
  Sizes s;
  s.unknowns = power(g.m, g.dim);
  for (const Point& v : neighbour_offsets(g.dim)) {
    std::int64_t pairs = 1;
    for (int k = 0; k < g.dim; ++k) pairs *= std::max<std::int64_t>(0, g.m - std::abs(v[k]));
    s.nnz += pairs;
  }
  // Cells away from the boundary (every corner index in [1, n - 2]) have only interior vertices; count
  // the kept simplices of the others one by one.
  const std::int64_t inner = power(std::max<std::int64_t>(0, g.n - 2), g.dim);
  s.elements = inner * factorial(g.dim);
  for (std::int64_t c = 0; c < g.cells(); ++c) {
    const Point corner = g.cell(c);
    bool touches = false;
    for (int k = 0; k < g.dim; ++k) touches |= corner[k] == 0 || corner[k] == g.n - 1;
    if (!touches) {  // skip the inner block in whole lines of the first axis
      c += std::max<std::int64_t>(0, g.n - 3);
      continue;
    }
    for (int t = 0; t < factorial(g.dim); ++t) s.elements += cell_has_unknown_vertex(g, corner, t);
  }
  return s;
}

template <class Value, class Index>
FemProblem<Value, Index> build(const MeshParams& mp, const BuildOptions& options) {
  const Sizes sz = sizes(mp);
  if (!fits_index<Index>(sz.unknowns, sz.unknowns, sz.nnz))
    throw Unsupported("fem: " + std::to_string(sz.unknowns) + " unknowns and " + std::to_string(sz.nnz) +
                      " nonzeros do not fit " + std::to_string(8 * sizeof(Index)) + "-bit indices");
  const int npe = mp.dim + 1;
  const auto bytes = [](std::int64_t count, std::size_t size) { return static_cast<long double>(count) * size; };
  const long double need =
      bytes(sz.unknowns + 1 + sz.nnz, sizeof(Index)) + bytes(sz.nnz + sz.unknowns, sizeof(Value)) +
      (options.element_data ? bytes(sz.elements * npe, sizeof(Index)) + bytes(sz.elements * npe * npe, sizeof(Value))
                            : 0.0L);
  const detail::MemoryBudget budget = detail::memory_budget(options.max_memory);
  if (need > static_cast<long double>(budget.bytes))
    throw MemoryLimitExceeded("fem: the problem with " + std::to_string(sz.unknowns) + " unknowns, " +
                              std::to_string(sz.nnz) + " nonzeros and " + std::to_string(sz.elements) +
                              " elements needs " + detail::format_bytes(static_cast<double>(need)) + ", more than " +
                              budget.source + " of " + detail::format_bytes(static_cast<double>(budget.bytes)));
  const Grid g{mp.dim, mp.n, mp.n - 1};
  const int d = g.dim;
  const int simplices = factorial(d);
  const int threads = thread_count(options);
  const std::vector<Point> offsets = neighbour_offsets(d);
  const GridSines sines(g.n);

  FemProblem<Value, Index> p;
  p.mesh = mp;
  p.unknowns = sz.unknowns;
  p.nodes_per_element = d + 1;
  auto& a = p.matrix;
  a.rows = a.cols = static_cast<Index>(sz.unknowns);
  a.row_ptr.assign(static_cast<std::size_t>(sz.unknowns) + 1, 0);
  a.col_idx.resize(static_cast<std::size_t>(sz.nnz));
  a.values.resize(static_cast<std::size_t>(sz.nnz));
  p.diagonal.resize(static_cast<std::size_t>(sz.unknowns));

  // Pattern: the unknown neighbours of each row's node (structure only), then the row pointers.
  const auto row_columns = [&](std::int64_t u, std::array<std::int64_t, 16>& cols) {
    const Point q = g.node_of_unknown(u);
    int count = 0;
    for (const Point& v : offsets) {
      const Point r{q[0] + v[0], q[1] + v[1], q[2] + v[2]};
      const std::int64_t c = g.unknown(r);
      if (c >= 0) cols[count++] = c;
    }
    std::sort(cols.begin(), cols.begin() + count);
    return count;
  };
  const auto rows = sz.unknowns;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t u = 0; u < rows; ++u) {
    std::array<std::int64_t, 16> cols{};
    a.row_ptr[u + 1] = static_cast<Index>(row_columns(u, cols));
  }
  for (std::int64_t u = 0; u < rows; ++u) a.row_ptr[u + 1] += a.row_ptr[u];

  // Values: row u sums row `a` of every element at its node, element by element in a fixed order
  // (cells q - o for o in {0,1}^d, then simplices), in double; rounded once when stored.
  int unoriented = 0;
#pragma omp parallel for num_threads(threads) schedule(static) reduction(+ : unoriented)
  for (std::int64_t u = 0; u < rows; ++u) {
    std::array<std::int64_t, 16> cols{};
    const int count = row_columns(u, cols);
    std::array<double, 16> sums{};
    const Point q = g.node_of_unknown(u);
    for (int o = 0; o < (1 << d); ++o) {
      Point corner = q;
      int ones = 0;
      for (int k = 0; k < d; ++k) {
        corner[k] -= (o >> k) & 1;
        ones += (o >> k) & 1;
      }
      for (int t = 0; t < simplices; ++t) {
        // The node is vertex `ones` of simplex t when the first `ones` axes of t's walk are o's axes.
        const auto& perm = permutation(d, t);
        int walked = 0;
        for (int k = 0; k < ones; ++k) walked |= 1 << perm[k];
        if (walked != o) continue;
        const ElementMatrix e = element_matrix(g, sines, mp, corner, t);
        unoriented += !e.oriented;
        for (int b = 0; b <= d; ++b) {
          const std::int64_t c = g.unknown(g.vertex(corner, t, b));
          if (c < 0) continue;
          const int slot = static_cast<int>(std::find(cols.begin(), cols.begin() + count, c) - cols.begin());
          sums[slot] += e.k[ones][b];
        }
      }
    }
    const Index start = a.row_ptr[u];
    for (int k = 0; k < count; ++k) {
      a.col_idx[start + k] = static_cast<Index>(cols[k]);
      a.values[start + k] = static_cast<Value>(sums[k]);
      if (cols[k] == u) p.diagonal[u] = static_cast<Value>(sums[k]);
    }
  }
  if (unoriented) throw Error("fem: " + std::to_string(unoriented) + " inverted element(s) (a bug: the bounds on distortion exclude this)");
  if (!options.element_data) return p;

  // Element data: simplices with an unknown vertex, in mesh order (cells lexicographic, then t).
  const std::int64_t cells = g.cells();
  std::vector<std::int64_t> first(static_cast<std::size_t>(cells) + 1, 0);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t c = 0; c < cells; ++c) {
    const Point corner = g.cell(c);
    int kept = 0;
    for (int t = 0; t < simplices; ++t) kept += cell_has_unknown_vertex(g, corner, t);
    first[c + 1] = kept;
  }
  for (std::int64_t c = 0; c < cells; ++c) first[c + 1] += first[c];
  const std::int64_t ne = first[cells];
  if (ne != sz.elements) throw Error("fem: element count " + std::to_string(ne) + " differs from sizes() (a bug)");
  p.elements = ne;
  p.element_unknowns.resize(static_cast<std::size_t>(ne * npe));
  p.element_matrices.resize(static_cast<std::size_t>(ne * npe * npe));
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t c = 0; c < cells; ++c) {
    const Point corner = g.cell(c);
    std::int64_t e = first[c];
    for (int t = 0; t < simplices; ++t) {
      if (!cell_has_unknown_vertex(g, corner, t)) continue;
      const ElementMatrix k = element_matrix(g, sines, mp, corner, t);
      for (int l = 0; l < npe; ++l)
        p.element_unknowns[static_cast<std::size_t>(l * ne + e)] =
            static_cast<Index>(g.unknown(g.vertex(corner, t, l)));
      for (int i = 0; i < npe; ++i)
        for (int j = 0; j < npe; ++j)
          p.element_matrices[static_cast<std::size_t>((i * npe + j) * ne + e)] = static_cast<Value>(k.k[i][j]);
      ++e;
    }
  }
  return p;
}

std::array<double, 3> unknown_position(const MeshParams& mp, std::int64_t u) {
  mesh_params_check(mp);
  const Grid g{mp.dim, mp.n, mp.n - 1};
  const std::int64_t unknowns = power(g.m, g.dim);
  if (u < 0 || u >= unknowns)
    throw InvalidArgument("fem: unknown " + std::to_string(u) + " is not in [0, " + std::to_string(unknowns) + ")");
  return position(g, GridSines(g.n), g.node_of_unknown(u), mp.distortion);
}

bool is_fem_kind(std::string_view kind) { return kind == "fem2d" || kind == "fem3d"; }

MeshParams mesh_params(std::string_view kind, const std::map<std::string, double>& params) {
  if (!is_fem_kind(kind)) throw InvalidArgument("fem: unknown kind '" + std::string(kind) + "' (fem2d, fem3d)");
  MeshParams mp;
  mp.dim = kind == "fem2d" ? 2 : 3;
  mp.n = kind == "fem2d" ? 1000 : 100;
  for (const auto& [key, value] : params) {
    if (key == "n") {
      if (!(value == std::floor(value) && std::abs(value) <= 9007199254740992.0))
        throw InvalidArgument(std::string(kind) + ": n = " + std::to_string(value) + " must be an integer");
      mp.n = static_cast<std::int64_t>(value);
    } else if (key == "kappa_amplitude") {
      mp.kappa_amplitude = value;
    } else if (key == "distortion") {
      mp.distortion = value;
    } else {
      throw InvalidArgument(std::string(kind) + ": unknown parameter '" + key +
                            "'; valid: distortion, kappa_amplitude, n");
    }
  }
  mesh_params_check(mp);
  return mp;
}

template <class Value, class Index>
LmaReference lma_reference(const FemProblem<Value, Index>& p, double alpha, std::span<const Value> x, double beta,
                           std::span<const Value> y0) {
  const auto nu = static_cast<std::size_t>(p.unknowns);
  if ((alpha != 0 && x.size() != nu) || (beta != 0 && y0.size() != nu))
    throw InvalidArgument("fem::lma_reference: x and y0 must have " + std::to_string(nu) + " entries");
  LmaReference r;
  r.expected.assign(nu, 0.0);
  r.magnitude.assign(nu, 0.0);
  r.terms.assign(nu, 0);
  const std::int64_t ne = p.elements;
  const int npe = p.nodes_per_element;
  for (std::int64_t e = 0; e < ne; ++e)
    for (int a = 0; a < npe; ++a) {
      const auto ua = static_cast<std::int64_t>(p.element_unknowns[static_cast<std::size_t>(a * ne + e)]);
      if (ua < 0) continue;
      for (int b = 0; b < npe; ++b) {
        const auto ub = static_cast<std::int64_t>(p.element_unknowns[static_cast<std::size_t>(b * ne + e)]);
        if (ub < 0) continue;
        ++r.terms[ua];
        if (alpha == 0) continue;
        const double t = static_cast<double>(p.element_matrices[static_cast<std::size_t>((a * npe + b) * ne + e)]) *
                         static_cast<double>(x[ub]);
        r.expected[ua] += t;
        r.magnitude[ua] += std::abs(t);
      }
    }
  for (std::size_t i = 0; i < nu; ++i)
    r.expected[i] = (alpha == 0 ? 0.0 : alpha * r.expected[i]) + (beta == 0 ? 0.0 : beta * static_cast<double>(y0[i]));
  return r;
}

template <class Value, class Index>
std::int64_t lma_multiply_adds(const FemProblem<Value, Index>& p) {
  std::int64_t total = 0;
  for (std::int64_t e = 0; e < p.elements; ++e) {
    std::int64_t m = 0;
    for (int l = 0; l < p.nodes_per_element; ++l) m += p.element_unknowns[static_cast<std::size_t>(l * p.elements + e)] >= 0;
    total += m * m;
  }
  return total;
}

template <class Value, class Index>
Colouring colour_elements(const FemProblem<Value, Index>& p) {
  // Greedy colouring bounded by (elements sharing an unknown with one element) + 1 <= npe * 24 + 1 =
  // 97 colours on these meshes (24 tetrahedra meet at a node); 128 bits per unknown leave room.
  constexpr int kMaxColours = 128;
  const std::int64_t ne = p.elements;
  const int npe = p.nodes_per_element;
  std::vector<std::bitset<kMaxColours>> seen(static_cast<std::size_t>(p.unknowns));
  std::vector<std::uint8_t> colour(static_cast<std::size_t>(ne));
  std::vector<std::int64_t> count;
  for (std::int64_t e = 0; e < ne; ++e) {
    std::bitset<kMaxColours> used;
    for (int l = 0; l < npe; ++l) {
      const auto u = static_cast<std::int64_t>(p.element_unknowns[static_cast<std::size_t>(l * ne + e)]);
      if (u >= 0) used |= seen[static_cast<std::size_t>(u)];
    }
    int c = 0;
    while (c < kMaxColours && used[c]) ++c;
    if (c == kMaxColours) throw Unsupported("fem: the element colouring needs more than 128 colours");
    colour[static_cast<std::size_t>(e)] = static_cast<std::uint8_t>(c);
    if (c >= static_cast<int>(count.size())) count.resize(c + 1, 0);
    ++count[c];
    for (int l = 0; l < npe; ++l) {
      const auto u = static_cast<std::int64_t>(p.element_unknowns[static_cast<std::size_t>(l * ne + e)]);
      if (u >= 0) seen[static_cast<std::size_t>(u)].set(c);
    }
  }
  Colouring out;
  out.colour_offsets.resize(count.size() + 1, 0);
  for (std::size_t c = 0; c < count.size(); ++c) out.colour_offsets[c + 1] = out.colour_offsets[c] + count[c];
  std::vector<std::int64_t> next(out.colour_offsets.begin(), out.colour_offsets.end() - 1);
  out.order.resize(static_cast<std::size_t>(ne));
  for (std::int64_t e = 0; e < ne; ++e) out.order[static_cast<std::size_t>(next[colour[e]]++)] = e;
  return out;
}

template <class Value, class Index>
std::unique_ptr<LmaOperator<Value>> make_lma_operator(Backend backend, const FemProblem<Value, Index>& p,
                                                      const Options& options) {
  if (backend == Backend::Cuda) return make_cuda_lma_operator(p, options);
  return make_cpu_lma_operator(p, options);
}

#ifndef SPMV_HAS_CUDA
template <class Value, class Index>
std::unique_ptr<LmaOperator<Value>> make_cuda_lma_operator(const FemProblem<Value, Index>&, const Options&) {
  throw Unsupported("spmv was built without the CUDA backend (configure with -DSPMV_ENABLE_CUDA=ON)");
}
#define SPMV_INSTANTIATE_CUDA_STUB(V, I) \
  template std::unique_ptr<LmaOperator<V>> make_cuda_lma_operator(const FemProblem<V, I>&, const Options&);
SPMV_INSTANTIATE_CUDA_STUB(float, std::int32_t)
SPMV_INSTANTIATE_CUDA_STUB(float, std::int64_t)
SPMV_INSTANTIATE_CUDA_STUB(double, std::int32_t)
SPMV_INSTANTIATE_CUDA_STUB(double, std::int64_t)
#undef SPMV_INSTANTIATE_CUDA_STUB
#endif

#define SPMV_INSTANTIATE(V, I)                                                                                     \
  template FemProblem<V, I> build<V, I>(const MeshParams&, const BuildOptions&);                                  \
  template LmaReference lma_reference(const FemProblem<V, I>&, double, std::span<const V>, double,                \
                                      std::span<const V>);                                                         \
  template std::int64_t lma_multiply_adds(const FemProblem<V, I>&);                                                \
  template Colouring colour_elements(const FemProblem<V, I>&);                                                     \
  template std::unique_ptr<LmaOperator<V>> make_lma_operator(Backend, const FemProblem<V, I>&, const Options&);
SPMV_INSTANTIATE(float, std::int32_t)
SPMV_INSTANTIATE(float, std::int64_t)
SPMV_INSTANTIATE(double, std::int32_t)
SPMV_INSTANTIATE(double, std::int64_t)
#undef SPMV_INSTANTIATE

}  // namespace spmv::fem
