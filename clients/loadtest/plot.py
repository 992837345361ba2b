"""The load test's picture: fan-out latency percentiles and throughput over time.

matplotlib (the `loadtest` extra) draws it headless; it is imported only here, so the load
test itself runs without it when no plot is asked for.
"""

from __future__ import annotations

from typing import Any


def plot_report(report: dict[str, Any], path: str, title: str | None = None) -> None:
    """Two panels over the run: latency percentiles (log scale), and delivered messages
    per second with the server's CPU; the warm-up is shaded."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import ticker

    rows = report["timeline"]
    cfg = report["config"]
    t = [r["t"] for r in rows]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 7), sharex=True)
    for key, style in (("p50", "-"), ("p95", "--"), ("p99", "-"), ("max", ":")):
        values = [r["fanout_ms"][key] if r["deliveries_per_s"] else float("nan") for r in rows]
        top.plot(t, values, style, label=f"fan-out {key}", linewidth=1.5 if key == "p99" else 1)
    top.set_yscale("log")
    top.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    top.set_ylabel("fan-out latency (ms)")
    top.grid(True, which="both", alpha=0.3)
    top.legend(loc="upper right", fontsize="small")
    bottom.plot(t, [r["deliveries_per_s"] for r in rows], color="tab:blue", label="delivered/s")
    bottom.set_ylabel("room messages delivered per second", color="tab:blue")
    bottom.set_xlabel("seconds since play started")
    bottom.grid(True, alpha=0.3)
    cpu = [r["server_cpu_percent"] for r in rows]
    if any(c is not None for c in cpu):
        right = bottom.twinx()
        right.plot(t, [c if c is not None else float("nan") for c in cpu], color="tab:red")
        waited = [r.get("server_wait_percent") for r in rows]
        if any(w is not None for w in waited):
            right.plot(
                t,
                [w if w is not None else float("nan") for w in waited],
                ":",
                color="tab:red",
                label="server waiting for a CPU",
            )
            right.legend(loc="lower right", fontsize="small")
        right.set_ylabel("server CPU (% of one core)", color="tab:red")
        right.set_ylim(bottom=0)
    for ax in (top, bottom):
        ax.axvspan(0, report["span"]["start_s"], color="grey", alpha=0.15, lw=0)
    fan = report["fanout_ms"]
    fig.suptitle(
        title
        or (
            f"{cfg['rooms']} rooms x {cfg['seats']} seats"
            f" ({cfg['game']}, think {cfg['think']:g} s):"
            f" fan-out p50 {fan['p50']:.2f} / p99 {fan['p99']:.2f} ms,"
            f" {report['deliveries_per_s']:.0f} delivered/s"
        ),
        fontsize="medium",
    )
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
