"""The parts of the synthetic cluster; ``benchmarks.synthetic`` puts them together."""
