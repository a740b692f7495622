"""The fofkit package's tests: `python3 -m unittest` in python/ runs them (buildenv.py finds the build)."""
