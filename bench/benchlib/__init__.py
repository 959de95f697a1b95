"""benchlib: the Python side of cpplaunch's benchmarks, driven by scripts/bench.

Layout (one concern per module):
    config        paths and launcher command-line constants shared by every module
    running       the run context (Bench), proc_run, launcher command lines, logging
    build         configuring and building the C++ helpers in the build directory
    machine       the machine facts the report states (CPU count, load, fd limit, packages)
    stats         median/min/max summaries, number formatting, the growth-exponent fit
    servers       starting the two store servers and driving bench/store_load
    plots         gnuplot PNGs (line and bar charts with min-max error bars)
    launch, teardown, e2e, store, storm, rendezvous, etcd, output, scale, etcd_scale, idle, status
                  one benchmark each: measure(ctx) runs it and returns plain data
    sections/     one module per benchmark turning its data into a report section and goals
    analysis      the prose explaining missed goals
    report        the markdown document and results.json
"""
