from ._core import *  # placeholder
