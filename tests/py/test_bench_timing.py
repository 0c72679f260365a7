"""bench_gemm.time_pair and time_rotation without a GPU: a stand-in torch whose events read a fake GPU clock that each
timed call advances by that side's cost. Checks the alternation (A B, B A, ...), the equal call counts, the rotation through
input sets, the time budget, and that the medians are each side's own."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import bench_gemm  # noqa: E402


class FakeTorch:
    """torch.cuda.Event / synchronize over a clock that the benchmarked functions advance."""

    def __init__(self):
        self.now = 0.0
        outer = self

        class Event:
            def __init__(self, enable_timing=False):
                self.t = None

            def record(self):
                self.t = outer.now

            def elapsed_time(self, end):
                return end.t - self.t

        class Cuda:
            pass

        self.cuda = Cuda()
        self.cuda.Event = Event
        self.cuda.synchronize = lambda: None


@pytest.fixture
def fake(monkeypatch):
    t = FakeTorch()
    monkeypatch.setattr(bench_gemm, "torch", t)
    return t


def test_alternating_blocks(fake):
    calls = []

    def side(name, ms):
        def fn(s):
            calls.append((name, s))
            fake.now += ms
        return fn

    a, b = side("a", 2.0), side("b", 3.0)
    ta, tb = bench_gemm.time_pair(a, b, ["s0", "s1", "s2"], warmup=2, iters=12, budget_s=10.0, block=5)
    timed = calls[4:]  # after two warm-up calls a side
    assert [c[0] for c in calls[:4]] == ["a", "a", "b", "b"]
    order = "".join(c[0] for c in timed)
    assert order == "aaaaabbbbb" + "bbbbbaaaaa" + "aabb", order
    assert ta == {"median_ms": 2.0, "min_ms": 2.0, "max_ms": 2.0, "runs": 12}
    assert tb == {"median_ms": 3.0, "min_ms": 3.0, "max_ms": 3.0, "runs": 12}
    # each side walks the sets in order, from the first
    assert [s for n, s in timed if n == "a"][:4] == ["s0", "s1", "s2", "s0"]
    assert [s for n, s in timed if n == "b"][:4] == ["s0", "s1", "s2", "s0"]


def test_budget_cuts_both_sides_alike(fake):
    def slow(s):
        fake.now += 50.0

    def fast(s):
        fake.now += 1.0

    ts, tf = bench_gemm.time_pair(slow, fast, [None], warmup=1, iters=100, budget_s=1.0)
    # half the budget a side: 500 ms / 50 ms = 10 calls of the slow one, and the fast one is held to the same count
    assert ts["runs"] == tf["runs"] == max(bench_gemm.MIN_ITERS, 10)
    assert ts["median_ms"] == 50.0 and tf["median_ms"] == 1.0


def recording_side(calls, fake):
    """A maker of sides: side(name, ms) is a call that appends name to calls and advances the fake clock by ms."""
    def side(name, ms):
        def fn(s):
            calls.append(name)
            fake.now += ms
        return fn
    return side


def test_rotation_of_three_sides(fake):
    """time_rotation: blocks of each side, the order turned by one each round (a b c, b c a, c a b), every side the
    same call count, which the slowest side's share of the budget sets."""
    calls = []
    side = recording_side(calls, fake)
    ta, tb, tc = bench_gemm.time_rotation([side("a", 1.0), side("b", 2.0), side("c", 4.0)], [None], warmup=1,
                                          iters=1000, budget_s=0.12, block=5)
    timed = "".join(calls[3:])
    # 40 ms a side: 10 calls of c (4 ms each), and a and b held to the same count
    assert ta["runs"] == tb["runs"] == tc["runs"] == 10
    assert timed == "aaaaabbbbbccccc" + "bbbbbcccccaaaaa", timed
    assert (ta["median_ms"], tb["median_ms"], tc["median_ms"]) == (1.0, 2.0, 4.0)


def test_sides_shorter_than_a_launch_are_timed_alone(fake):
    """time_sides: where the first side's call is under short_ms, each side alone (all of a's calls, then b's);
    otherwise in rotation."""
    calls = []
    side = recording_side(calls, fake)
    ta, tb = bench_gemm.time_sides([side("a", 0.01), side("b", 0.02)], [None], warmup=1, iters=400, budget_s=1.0,
                                   short_iters=12)
    assert "".join(calls[1:]) == "a" + "a" * 12 + "b" + "b" * 12  # (the estimate's call, then each side alone)
    assert ta["runs"] == tb["runs"] == 12
    assert (ta["median_ms"], tb["median_ms"]) == (pytest.approx(0.01), pytest.approx(0.02))
    calls.clear()
    ta, tb = bench_gemm.time_sides([side("a", 1.0), side("b", 2.0)], [None], warmup=1, iters=10, budget_s=1.0)
    assert "".join(calls[3:]) == "aaaaabbbbb" + "bbbbbaaaaa"


def test_drift_reaches_both_sides(fake):
    """A clock that slows down over the run (a heating GPU) slows both sides' medians alike: the ratio stays."""
    n = {"calls": 0}

    def drifting(base):
        def fn(s):
            n["calls"] += 1
            fake.now += base * (1.0 + n["calls"] / 200.0)
        return fn

    ta, tb = bench_gemm.time_pair(drifting(1.0), drifting(2.0), [None], warmup=1, iters=50, budget_s=100.0)
    assert abs(tb["median_ms"] / ta["median_ms"] - 2.0) < 0.02
    # the same two sides timed one after the other (time_fn) carry the drift into the ratio
    n["calls"] = 0
    ta = bench_gemm.time_fn(drifting(1.0), [None], 1, 50, 100.0)
    tb = bench_gemm.time_fn(drifting(2.0), [None], 1, 50, 100.0)
    assert tb["median_ms"] / ta["median_ms"] > 2.2


def test_bench_w8_summary_says_which_side_of_each_target():
    """bench_w8's summary lines on its self-check rows, and on a value that rounds onto its target from below."""
    import subprocess

    bench = Path(__file__).resolve().parents[2] / "bench"
    r = subprocess.run([sys.executable, str(bench / "bench_w8.py"), "--self-check"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "self-check passed" in r.stdout
    assert "geomean 2.000 (meets >= 1.8)" in r.stdout and "min 0.900 (misses >= 1.0)" in r.stdout, r.stdout
    import bench_w8

    assert bench_w8._vs(1.7999557, 1.8) == "1.79996 (misses >= 1.8)"
    assert bench_w8._vs(1.168, 1.25, at_most=True) == "1.168 (meets <= 1.25)"
    assert bench_w8._vs(None, 1.0) == "n/a"


class FakeGraphTorch(FakeTorch):
    """FakeTorch plus streams and CUDA graphs: calls made while capturing are recorded into the graph (they do not
    advance the clock); replay runs them again, each advancing the clock by its side's cost."""

    def __init__(self):
        super().__init__()
        outer = self
        self.capturing = None

        class Stream:
            def wait_stream(self, other):
                pass

        class StreamCtx:
            def __init__(self, stream):
                pass

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

        class CUDAGraph:
            def __init__(self):
                self.calls = []

            def replay(self):
                for fn, s in self.calls:
                    fn(s)

        class GraphCtx:
            def __init__(self, g):
                self.g = g

            def __enter__(self):
                outer.capturing = self.g
                return self

            def __exit__(self, *exc):
                outer.capturing = None
                return False

        self.cuda.Stream = Stream
        self.cuda.stream = StreamCtx
        self.cuda.current_stream = Stream
        self.cuda.CUDAGraph = CUDAGraph
        self.cuda.graph = GraphCtx


def test_time_graph(monkeypatch):
    fake = FakeGraphTorch()
    monkeypatch.setattr(bench_gemm, "torch", fake)
    seen = []

    def side(name, ms):
        def fn(s):
            if fake.capturing is not None:
                fake.capturing.calls.append((fn, s))
                return
            seen.append((name, s))
            fake.now += ms
        return fn

    a, b = side("a", 0.010), side("b", 0.004)
    ta, tb = bench_gemm.time_graph([a, b], ["s0", "s1", "s2"], est_ms=0.010, reps=4)
    # calls a graph: 20 ms of calls at the estimate, capped at GRAPH_CALLS; per-call medians are each side's own
    assert ta["calls"] == tb["calls"] == bench_gemm.GRAPH_CALLS and ta["runs"] == tb["runs"] == 4
    assert ta["median_ms"] == pytest.approx(0.010) and tb["median_ms"] == pytest.approx(0.004)
    # the captured calls rotate through the sets; replays alternate A B, B A, ...
    replayed = [n for n, _ in seen]
    assert [s for n, s in seen if n == "a"][-3:] == ["s2", "s0", "s1"]
    per = bench_gemm.GRAPH_CALLS
    tail = replayed[-8 * per:]
    blocks = "".join(tail[i * per] for i in range(8))
    assert blocks == "abbaabba"
    # a long call: at least 3 calls a graph
    tc, = bench_gemm.time_graph([a], ["s0"], est_ms=50.0, reps=2)
    assert tc["calls"] == 3 and tc["median_ms"] == pytest.approx(0.010)
    f = bench_gemm.graph_fields(2e9, ta, tb)
    assert f["graph_ratio"] == pytest.approx(0.4) and f["graph_calls"] == per


def test_per_call_kernel_us():
    """time_kernels' grouping of a profile: each flush opens a call; a call sums its own kernels (a split's reduce
    too); a flush of two kernels and a call with no kernel leave no empty call; the order is the kernels' start."""
    flush = {"fill", "fill2"}
    kernels = [("gemm", 12.0, 17.0), ("fill", 0.0, 10.0), ("reduce", 17.5, 18.5), ("fill", 20.0, 30.0),
               ("fill2", 30.0, 31.0), ("gemm", 32.0, 36.0), ("fill", 40.0, 50.0), ("fill", 50.0, 60.0),
               ("gemm", 61.0, 64.0)]
    assert bench_gemm.per_call_kernel_us(kernels, flush) == [6.0, 4.0, 3.0]
    assert bench_gemm.per_call_kernel_us([], flush) == []
    assert bench_gemm.per_call_kernel_us([("gemm", 0.0, 2.0)], flush) == [2.0]  # no flush before it
