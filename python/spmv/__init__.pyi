# Type stubs of the spmv package (the names of spmv/__init__.py).
from . import generate as generate
from ._core import CudaError as CudaError
from ._core import ParseError as ParseError
from ._core import UnsupportedError as UnsupportedError
from ._matrix import Matrix as Matrix
from ._matrix import read_matrix_market as read_matrix_market
from ._solvers import SolveInfo as SolveInfo
from ._solvers import bicgstab as bicgstab
from ._solvers import cg as cg
from ._solvers import gmres as gmres
from ._tools import algorithms as algorithms
from ._tools import bench as bench
from ._tools import cuda_available as cuda_available
from ._tools import info as info

__version__: str
__all__: list[str]
