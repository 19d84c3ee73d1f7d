"""Benchmark DepthToSpace: GPU time (timestamp queries, median), GB/s, ratio to the in-run vec4
copy, torch pixel_shuffle on the same GPU where available, and host overhead per batched dispatch.

    python bench/bench_depth_to_space.py [--quick] [--dtype float16] [--json]
"""

import sys

from dmlwgsl.benchmark import bench_depth_space, depth_space_main, depth_space_parser


def run(device, argv=None):
    """Rows for ``dmlwgsl bench``."""
    return bench_depth_space("depth_to_space", device, depth_space_parser("depth_to_space").parse_args(argv or []))


def main(argv=None) -> int:
    """Command-line entry point."""
    return depth_space_main("depth_to_space", argv)


if __name__ == "__main__":
    sys.exit(main())
