"""The test suite. A package so that its shared support is imported as `tests.support`."""
