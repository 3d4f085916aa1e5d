import os
import sys

# Test the installed package: drop python/ (the source tree, which has no compiled _core) from the
# path that `python -m pytest` run inside python/ would put first.
_SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _SOURCE_ROOT]
