#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The statistics of coltune-tune on synthetic samples (no MPI, no timing):
the interval's coverage over many seeded trials (known ratios, heavy-tailed
noise, ties), the stopping rule (a clear 1.5x win decided in the fewest
rounds, an A/A pair never a win, an undecidable cell kept at the baseline
when the budget runs out, a clear win whose interval stayed wide won by its
median), the choice among equals and over a row, validation flags and exact
(simulated) estimates.

  python3 test_tune_stats.py PATH/TO/coltune-tune
"""

import importlib.machinery
import importlib.util
import math
import random
import sys
import unittest


def load_tune(path):
    loader = importlib.machinery.SourceFileLoader("coltune_tune", path)
    spec = importlib.util.spec_from_loader("coltune_tune", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


tune = None  # set in main


# ---------------------------------------------------------------- noise models
# Each returns a positive factor multiplying a true time. Candidate and
# baseline draw independently from the same model, so the median of the
# paired ratio base/cand is exactly the true ratio.

def lognormal(rng):
    return math.exp(rng.gauss(0.0, 0.15))


def heavy_tailed(rng):
    """Mostly small noise, a Pareto tail (alpha 1.2: infinite variance) and
    one call in twenty 20 times slower (a descheduled rank)."""
    x = 1.0 + 0.05 * (rng.paretovariate(1.2) - 1.0)
    return x * (20.0 if rng.random() < 0.05 else 1.0)


def quantized(rng):
    """Timer ticks: 10 us calls measured to the microsecond, many ties."""
    return round(10.0 * math.exp(rng.gauss(0.0, 0.1))) / 10.0


MODELS = {"lognormal": lognormal, "heavy-tailed": heavy_tailed, "quantized": quantized}


def paired(rng, ratio, n, model, drift=True):
    """n paired iterations: baseline 100 us * ratio, candidate 100 us, each
    with its own noise and a drift common to the pair (the machine)."""
    base, cand = [], []
    for _ in range(n):
        d = math.exp(rng.gauss(0.0, 0.3)) if drift else 1.0
        base.append(100.0 * ratio * d * model(rng))
        cand.append(100.0 * d * model(rng))
    return base, cand


class Args:
    """coltune-tune's options that the decision reads."""

    def __init__(self, **kw):
        self.margin, self.noise, self.confidence = 5.0, 3.0, 95.0
        self.iters, self.max_iters = 20, 160
        self.__dict__.update(kw)


class FakeBench:
    """run_round for measure_config: a cell per size, the baseline, its A/A
    copy and candidates with known true ratios; a fake clock advanced by
    seconds_per_sample for every time drawn."""

    def __init__(self, seed, ratios, sizes=(16,), model=heavy_tailed, seconds_per_sample=0.0):
        self.rng = random.Random(seed)
        self.ratios, self.sizes, self.model = ratios, sizes, model
        self.per_sample, self.now, self.calls = seconds_per_sample, 0.0, []

    def clock(self):
        return self.now

    def __call__(self, specs, sizes, iters):
        specs = list(self.ratios) if specs is None else specs
        self.calls.append((list(specs), list(sizes or self.sizes), iters))
        out = {}
        for size in sizes or self.sizes:
            key = ("alltoallv", 4, 1, 4, size)
            labels = ["pmpi", "pmpi#2"] + list(specs)
            times = {label: [] for label in labels}
            for _ in range(iters):
                drift = math.exp(self.rng.gauss(0.0, 0.2))
                for label in labels:
                    ratio = self.ratios.get(label, 1.0)  # pmpi, pmpi#2: 1
                    times[label].append(100.0 / ratio * drift * self.model(self.rng))
            for label in labels:
                out[(key, label)] = times[label]
            self.now += self.per_sample * iters * len(labels)
        return out


class Interval(unittest.TestCase):
    def test_ranks_of_the_sign_test(self):
        # Known values of the distribution-free interval of a median (95%).
        self.assertEqual(tune.median_interval_ranks(10, 0.95), (1, 8))
        self.assertEqual(tune.median_interval_ranks(20, 0.95), (5, 14))
        self.assertEqual(tune.median_interval_ranks(100, 0.95), (39, 60))
        self.assertEqual(tune.median_interval_ranks(3, 0.95), (0, 2))

    def test_coverage_at_the_stated_rate(self):
        """Over 400 seeded trials per case the interval holds the true ratio
        at least at the stated rate (minus 3 standard errors of the trials)."""
        trials, conf = 400, 0.95
        slack = 3.0 * math.sqrt(conf * (1 - conf) / trials)
        for name, model in MODELS.items():
            for ratio in (1.0, 1.5, 0.7):
                for n in (10, 20, 41):
                    rng = random.Random("%s-%g-%d" % (name, ratio, n))
                    hits = 0
                    for _ in range(trials):
                        est = tune.paired_estimate(*paired(rng, ratio, n, model), conf)
                        hits += est.lo <= ratio <= est.hi
                    with self.subTest(model=name, ratio=ratio, n=n):
                        self.assertGreaterEqual(hits / trials, conf - slack)

    def test_ties(self):
        est = tune.paired_estimate([10.0] * 20, [10.0] * 20, 0.95)
        self.assertEqual((est.point, est.lo, est.hi), (1.0, 1.0, 1.0))
        est = tune.paired_estimate([15.0] * 20, [10.0] * 20, 0.95)
        self.assertEqual((est.point, est.lo, est.hi), (1.5, 1.5, 1.5))

    def test_interval_narrows_with_iterations(self):
        rng = random.Random(7)
        small = tune.paired_estimate(*paired(rng, 1.3, 20, lognormal), 0.95)
        large = tune.paired_estimate(*paired(rng, 1.3, 640, lognormal), 0.95)
        self.assertLess(large.hi - large.lo, small.hi - small.lo)

    def test_runs_widen_the_interval(self):
        """The interval of a cell holds the median of every bench run."""
        s = tune.Samples()
        key = ("alltoallv", 4, 1, 4, 16)
        s.add_run({(key, "pmpi"): [100.0] * 20, (key, "x"): [50.0] * 20})  # 2.0x
        s.add_run({(key, "pmpi"): [100.0] * 20, (key, "x"): [80.0] * 20})  # 1.25x
        est = s.estimate(key, "pmpi", "x", 0.95)
        self.assertLessEqual(est.lo, 1.25)
        self.assertGreaterEqual(est.hi, 2.0)


class Stopping(unittest.TestCase):
    def test_clear_win_is_decided_in_the_fewest_rounds(self):
        """A 1.5x candidate among slower ones, heavy-tailed noise: tuned
        after the three bench runs a win needs, over 50 seeds."""
        covered = 0
        for seed in range(50):
            bench = FakeBench(seed, {"slow": 0.8, "fast": 1.5, "same": 1.0})
            got, _, rounds = tune.measure_config(bench, "pmpi", Args(), 1e9, bench.clock)
            d = got[("alltoallv", 4, 1, 4, 16)]
            self.assertEqual((d.status, d.spec), ("tuned", "fast"), "seed %d" % seed)
            self.assertEqual(len(rounds), tune.WIN_LAUNCHES, "seed %d" % seed)
            covered += d.est.lo <= 1.5 <= d.est.hi
        self.assertGreaterEqual(covered, 45)  # 95% intervals (widened), 50 seeds

    def test_aa_cell_is_never_a_win(self):
        """Candidates that are the baseline in disguise, in every noise model,
        measured through all rounds: never decided as a win."""
        for name, model in MODELS.items():
            for seed in range(100):
                bench = FakeBench(seed, {"twin": 1.0, "twin2": 1.0}, model=model)
                got, _, _ = tune.measure_config(bench, "pmpi", Args(), 1e9, bench.clock)
                d = got[("alltoallv", 4, 1, 4, 16)]
                self.assertNotEqual(d.status, "tuned", "%s seed %d: %s %s" % (
                    name, seed, d.spec, d.est))

    def test_budget_keeps_the_baseline_for_lack_of_evidence(self):
        """A candidate right at the margin cannot be decided: when the budget
        runs out the cell keeps the baseline and says why."""
        bench = FakeBench(3, {"edge": 1.05}, model=lognormal, seconds_per_sample=0.01)
        got, _, rounds = tune.measure_config(bench, "pmpi", Args(), 2.0, bench.clock)
        d = got[("alltoallv", 4, 1, 4, 16)]
        self.assertEqual((d.status, d.spec), ("no-evidence", "pmpi"))
        self.assertIn("budget", d.note)
        self.assertLess(sum(r[0] for r in rounds), Args().max_iters)

    def test_max_iters_ends_an_undecidable_cell(self):
        bench = FakeBench(4, {"edge": 1.05}, model=lognormal)
        got, _, rounds = tune.measure_config(bench, "pmpi", Args(max_iters=80), 1e9,
                                             bench.clock)
        d = got[("alltoallv", 4, 1, 4, 16)]
        self.assertEqual(d.status, "no-evidence")
        self.assertIn("--max-iters", d.note)
        self.assertEqual([r[0] for r in rounds], tune.round_plan(20, 80))

    def test_later_rounds_measure_only_undecided_cells_and_live_candidates(self):
        bench = FakeBench(5, {"loser": 0.5, "edge": 1.05}, sizes=(16, 4096), model=lognormal)
        tune.measure_config(bench, "pmpi", Args(max_iters=80), 1e9, bench.clock)
        self.assertEqual(bench.calls[0][0], ["loser", "edge"])  # the whole sweep first
        self.assertGreater(len(bench.calls), 1)
        for specs, _, _ in bench.calls[1:]:
            self.assertEqual(specs, ["edge"])

    def test_a_row_is_measured_whole_for_the_launches_a_verdict_needs(self):
        """A collective decided by row (whole=WIN_LAUNCHES): every spec at
        every size in the first three rounds, though "loser" is out after
        the first, so every cell's estimate holds three bench runs."""
        bench = FakeBench(5, {"loser": 0.5, "edge": 1.05}, sizes=(16, 4096), model=lognormal)
        got, samples, rounds = tune.measure_config(bench, "pmpi", Args(max_iters=80), 1e9,
                                                   bench.clock, whole=tune.WIN_LAUNCHES)
        self.assertGreaterEqual(len(rounds), tune.WIN_LAUNCHES)
        for specs, sizes, _ in bench.calls[:tune.WIN_LAUNCHES]:
            self.assertEqual((specs, sizes), (["loser", "edge"], [16, 4096]))
        for key in got:
            self.assertEqual(len(samples.launch_medians(key, "pmpi", "loser")),
                             tune.WIN_LAUNCHES)
        # a plan shorter than the whole rounds still decides every cell
        bench = FakeBench(6, {"loser": 0.5}, sizes=(16, 4096), model=lognormal)
        got, _, rounds = tune.measure_config(bench, "pmpi", Args(max_iters=20), 1e9,
                                             bench.clock, whole=tune.WIN_LAUNCHES)
        self.assertEqual((len(rounds), len(got)), (1, 2))

    def test_round_plan(self):
        self.assertEqual(tune.round_plan(20, 160), [20, 20, 40, 80])
        self.assertEqual(tune.round_plan(5, 40), [5, 5, 10, 20])
        self.assertEqual(tune.round_plan(20, 20), [20])


class Decisions(unittest.TestCase):
    def est(self, point, lo, hi):
        return tune.Estimate(point, lo, hi, 40)

    def test_equals_go_to_the_first_in_order(self):
        cands = {"a": self.est(1.90, 1.70, 2.00), "b": self.est(2.00, 1.85, 2.15)}
        runs = {"a": [1.9, 1.9, 1.9], "b": [2.0, 2.0, 2.0]}
        d = tune.decide("pmpi", None, cands, ["a", "b"], 5.0, 3.0, runs)
        self.assertEqual((d.status, d.spec), ("tuned", "a"))
        d = tune.decide("pmpi", None, cands, ["b", "a"], 5.0, 3.0, runs)
        self.assertEqual(d.spec, "b")

    def test_equals_go_to_the_winner_of_the_row(self):
        """b is among the equal winners at both sizes, a only at one: both
        cells get b, with b's own estimate."""
        e = self.est
        runs = {s: [2.0, 2.0, 2.0] for s in "ab"}
        one = tune.decide("pmpi", None, {"a": e(2.0, 1.9, 2.1), "b": e(1.95, 1.85, 2.05)},
                          ["a", "b"], 5.0, 3.0, runs)
        two = tune.decide("pmpi", None, {"a": e(1.2, 1.1, 1.3), "b": e(2.0, 1.9, 2.1)},
                          ["a", "b"], 5.0, 3.0, {"a": [1.2] * 3, "b": [2.0] * 3})
        self.assertEqual((one.spec, two.spec), ("a", "b"))
        choice = {("alltoallv", 4, 1, 4, 16): one, ("alltoallv", 4, 1, 4, 4096): two}
        tune.harmonize_rows(choice, lambda key: ["a", "b"])
        self.assertEqual([d.spec for d in choice.values()], ["b", "b"])
        self.assertEqual(one.est.point, 1.95)

    def test_equals_that_trade_places_between_launches(self):
        """The pooled intervals tell a and b apart, but a is ahead in one of
        the three bench runs: equals, and a, first in order, gets the cell.
        Behind in all three beyond the margin, b wins."""
        cands = {"a": self.est(1.80, 1.75, 1.85), "b": self.est(2.00, 1.95, 2.05)}
        d = tune.decide("pmpi", None, cands, ["a", "b"], 5.0, 3.0,
                        {"a": {1: 1.8, 2: 2.05, 3: 1.8}, "b": {1: 2.0, 2: 1.95, 3: 2.1}})
        self.assertEqual(d.spec, "a")
        self.assertEqual(set(d.equals), {"a", "b"})
        d = tune.decide("pmpi", None, cands, ["a", "b"], 5.0, 3.0,
                        {"a": {1: 1.8, 2: 1.8, 3: 1.8}, "b": {1: 2.0, 2: 1.95, 3: 2.1}})
        self.assertEqual(d.spec, "b")
        # within the margin in one run (1.9 * 1.05 >= 1.95) is not "beaten"
        d = tune.decide("pmpi", None, cands, ["a", "b"], 5.0, 3.0,
                        {"a": {1: 1.8, 2: 1.9, 3: 1.8}, "b": {1: 2.0, 2: 1.95, 3: 2.1}})
        self.assertEqual(d.spec, "a")

    def test_a_clearly_better_candidate_wins_over_order(self):
        cands = {"a": self.est(1.20, 1.15, 1.25), "b": self.est(2.00, 1.90, 2.10)}
        d = tune.decide("pmpi", None, cands, ["a", "b"], 5.0, 3.0,
                        {"a": [1.2, 1.2, 1.2], "b": [2.0, 2.0, 2.0]})
        self.assertEqual(d.spec, "b")

    def test_noise_raises_the_threshold(self):
        cands = {"a": self.est(1.20, 1.12, 1.30)}
        runs = {"a": [1.2, 1.2, 1.2]}
        quiet = tune.decide("pmpi", self.est(1.0, 0.98, 1.02), cands, ["a"], 5.0, 3.0, runs)
        noisy = tune.decide("pmpi", self.est(1.0, 0.80, 1.25), cands, ["a"], 5.0, 3.0, runs)
        self.assertEqual(quiet.status, "tuned")
        self.assertEqual(noisy.status, "open")
        self.assertAlmostEqual(noisy.threshold, 1.25)
        self.assertAlmostEqual(quiet.threshold, 1.05)

    def test_two_bench_runs_are_not_enough_for_a_win(self):
        for runs in ([2.0], [2.0, 2.0]):
            d = tune.decide("pmpi", None, {"a": self.est(2.0, 1.9, 2.1)}, ["a"], 5.0, 3.0,
                            {"a": runs})
            self.assertEqual(d.status, "open")

    def test_baseline_won_and_lack_of_evidence_differ(self):
        won = tune.decide("pmpi", None, {"a": self.est(0.9, 0.85, 0.95)}, ["a"], 5.0, 3.0,
                          {"a": [0.9, 0.9, 0.9]})
        self.assertEqual(won.status, "baseline")
        open_ = tune.decide("pmpi", None, {"a": self.est(0.95, 0.90, 0.99),
                                           "b": self.est(0.90, 0.70, 1.20)}, ["a", "b"], 5.0,
                            3.0, {"a": [0.95, 0.95, 0.95], "b": [0.9, 0.9, 0.9]})
        self.assertEqual((open_.status, open_.alive, open_.best[0]), ("open", ["b"], "b"))
        self.assertEqual(tune.cell_note(won), "baseline won")
        won.status = "no-evidence"
        self.assertIn("lack of evidence", tune.cell_note(won))

    def test_a_clear_win_with_a_wide_interval_wins_by_its_median_once_stopped(self):
        """Measuring stopped with a's interval straddling the threshold: a
        wins by its median when the interval lies above 1 and the median
        beats the threshold by the margin again (1.05 x 1.05 here); not a
        near-tie at the threshold, nor a median win whose interval reaches
        below 1, nor one with fewer than three bench runs."""
        runs = {"a": [1.2, 1.2, 1.2]}
        for (point, lo, hi), want in (((1.20, 1.02, 1.40), "tuned"),
                                      ((1.11, 1.01, 1.20), "tuned"),
                                      ((1.09, 1.01, 1.20), "open"),
                                      ((1.05, 1.01, 1.10), "open"),
                                      ((1.30, 0.99, 1.60), "open")):
            cands = {"a": self.est(point, lo, hi)}
            going = tune.decide("pmpi", None, cands, ["a"], 5.0, 3.0, runs)
            stopped = tune.decide("pmpi", None, cands, ["a"], 5.0, 3.0, runs, stopped=True)
            self.assertEqual(going.status, "open", point)
            self.assertEqual(stopped.status, want, (point, lo))
            if want == "tuned":
                self.assertEqual((stopped.spec, stopped.note), ("a", tune.MEDIAN_NOTE))
                self.assertIn("(by its median)", tune.cell_note(stopped))
        two = tune.decide("pmpi", None, {"a": self.est(1.2, 1.02, 1.4)}, ["a"], 5.0, 3.0,
                          {"a": [1.2, 1.2]}, stopped=True)
        self.assertEqual(two.status, "open")
        # a win by the lower end is a plain win, stopped or not
        clear = tune.decide("pmpi", None, {"a": self.est(1.3, 1.2, 1.4)}, ["a"], 5.0, 3.0,
                            runs, stopped=True)
        self.assertEqual((clear.status, clear.note), ("tuned", ""))

    def test_measuring_that_stops_keeps_a_clear_win(self):
        """A 1.6x candidate under noise as large as its gain (each time
        times a lognormal factor of sigma 0.6), measuring stopped at 80
        iterations: where the median beats the cell's threshold (raised by
        its A/A noise) by the margin, the cell is the candidate's, by its
        median where its interval still straddled the threshold (the
        baseline's, for lack of evidence, in 4 of these 10 seeds before)."""
        model = lambda rng: math.exp(rng.gauss(0.0, 0.6))
        tuned = by_median = 0
        for seed in range(10):
            bench = FakeBench(seed, {"a": 1.6}, model=model)
            got, _, _ = tune.measure_config(bench, "pmpi", Args(max_iters=80), 1e9, bench.clock)
            d = got[("alltoallv", 4, 1, 4, 16)]
            if d.spec == "a":
                tuned += 1
                by_median += d.note == tune.MEDIAN_NOTE
            else:
                self.assertEqual(d.status, "no-evidence")
                self.assertLess(d.best[1].point, d.threshold * 1.05, "seed %d" % seed)
        self.assertEqual((tuned, by_median), (8, 4))


class Rows(unittest.TestCase):
    """One choice over a row of sizes (collapse_row): for collectives whose
    msg_size is rank-local, up front, and after a flagged validation."""

    SIZES = (16, 256, 4096, 65536)

    def row(self, ratios, seed=7, sigma=0.02):
        """ratios: {spec: [true speedup at each size]}; two bench runs of 60
        iterations with noise (a lognormal factor of sigma, mild by
        default). Returns (data, choice) as measure() leaves them."""
        rng, samples = random.Random(seed), tune.Samples()
        keys = [("alltoallv", 8, 1, 8, s) for s in self.SIZES]
        for _ in range(2):
            run = {}
            for i, key in enumerate(keys):
                labels = {"pmpi": 1.0, "pmpi#2": 1.0}
                labels.update({spec: r[i] for spec, r in ratios.items()})
                for label, ratio in labels.items():
                    run[(key, label)] = [100.0 / ratio * math.exp(rng.gauss(0.0, sigma))
                                         for _ in range(60)]
            samples.add_run(run)
        args = Args()
        choice = {k: tune.decide_cell(samples, k, "pmpi", args) for k in keys}
        return {k: (samples, "pmpi") for k in keys}, choice, args

    def collapse(self, ratios):
        data, choice, args = self.row(ratios)
        best = tune.collapse_row(data, choice, ("alltoallv", 8, 1, 8), args, tune.ROW_WHY)
        return best, choice

    def test_one_algorithm_for_the_row(self):
        """a wins at small sizes and is at parity (within the margin) at 64 KiB;
        b wins only at 16 B: the row gets a everywhere, each cell with a's
        own estimate, marked as a row choice."""
        best, choice = self.collapse({"a": [2.0, 1.8, 1.4, 0.99], "b": [1.3, 1.0, 1.0, 1.0]})
        self.assertEqual(best, "a")
        self.assertEqual({d.spec for d in choice.values()}, {"a"})
        self.assertTrue(all(d.note == tune.ROW_WHY for d in choice.values()))
        self.assertAlmostEqual(choice[("alltoallv", 8, 1, 8, 16)].est.point, 2.0, delta=0.05)
        self.assertIn("(row)", tune.cell_note(choice[("alltoallv", 8, 1, 8, 16)]))

    def test_slower_anywhere_is_not_eligible(self):
        """a is 0.8x at 64 KiB, then 0.93x, slower than the 5% margin
        allows: b, a smaller win nowhere slower, gets the row. Under a noisy
        cell's threshold (1.08x, whose mirror 0.926 let 0.93x pass; such a
        loss grew to 0.4x beyond the grid) too. At 0.97x (a loss within the
        margin) a keeps it."""
        for loss in (0.8, 0.93):
            best, _ = self.collapse({"a": [2.0, 1.8, 1.4, loss], "b": [1.3, 1.3, 1.2, 1.0]})
            self.assertEqual(best, "b", loss)
            data, choice, args = self.row({"a": [2.0, 1.8, 1.4, loss],
                                           "b": [1.3, 1.3, 1.2, 1.0]})
            for d in choice.values():
                d.threshold = 1.08
            self.assertEqual(tune.collapse_row(data, choice, ("alltoallv", 8, 1, 8), args,
                                               tune.ROW_WHY), "b", loss)
        best, _ = self.collapse({"a": [2.0, 1.8, 1.4, 0.97], "b": [1.3, 1.3, 1.2, 1.0]})
        self.assertEqual(best, "a")

    def test_equals_over_the_row_go_to_the_first_in_order(self):
        """a and b are the same algorithm in all but name: every seed picks
        a, the first in the bench's list."""
        for seed in range(10):
            data, choice, args = self.row({"a": [1.5] * 4, "b": [1.5] * 4}, seed)
            self.assertEqual(tune.collapse_row(data, choice, ("alltoallv", 8, 1, 8), args,
                                               tune.ROW_WHY), "a")

    def test_no_row_winner_keeps_the_baseline(self):
        best, choice = self.collapse({"a": [1.3, 1.0, 0.95, 0.9], "b": [0.9, 1.0, 1.0, 1.02]})
        self.assertEqual(best, "pmpi")
        self.assertTrue(all(d.status == "baseline" and d.spec == "pmpi"
                            for d in choice.values()))

    def test_a_near_tie_row_is_kept_for_lack_of_evidence(self):
        """a is exactly at the margin everywhere: its row interval straddles
        the threshold, so no seed may decide the row either way (two runs
        once chose a and the baseline); the cells are kept at the baseline
        for lack of evidence, naming a."""
        for seed in range(10):
            data, choice, args = self.row({"a": [1.05] * 4, "b": [0.9] * 4}, seed)
            best = tune.collapse_row(data, choice, ("alltoallv", 8, 1, 8), args, tune.ROW_WHY)
            self.assertEqual(best, "pmpi")
            for d in choice.values():
                self.assertEqual((d.status, d.spec, d.best[0]), ("no-evidence", "pmpi", "a"))
                self.assertIn("no evidence", tune.cell_note(d))
        # eligible (nowhere slower) but nowhere near the margin: won
        data, choice, args = self.row({"a": [1.0] * 4}, 1)
        tune.collapse_row(data, choice, ("alltoallv", 8, 1, 8), args, tune.ROW_WHY)
        self.assertTrue(all(d.status == "baseline" for d in choice.values()))

    def test_a_noisy_row_is_won_by_its_median(self):
        """a is 1.5x at every size under noise as large as its gain (sigma
        0.5): its row interval lies above 1 but does not always clear the
        threshold, and its median beats the threshold by the margin; every
        seed gives the row to a (5 of these 10 kept the baseline before),
        and the cells' note says how."""
        by_median = 0
        for seed in range(10):
            data, choice, args = self.row({"a": [1.5] * 4}, seed, sigma=0.5)
            best = tune.collapse_row(data, choice, ("alltoallv", 8, 1, 8), args, tune.ROW_WHY)
            self.assertEqual(best, "a", "seed %d" % seed)
            notes = {d.note for d in choice.values()}
            self.assertEqual(len(notes), 1)
            by_median += "won by the row's median" in notes.pop()
        self.assertEqual(by_median, 5)

    def test_which_collectives_decide_by_row(self):
        self.assertEqual({c for c in tune.COLLECTIVES if not tune.per_size(c)},
                         {"alltoallv", "ialltoallv", "allgatherv_inter", "iallgatherv_inter",
                          "alltoall_crs", "alltoallv_crs", "neighbor_alltoallv",
                          "ineighbor_alltoallv"})

    def test_one_block_size_rules_name_connected_graphs(self):
        # Neighbor_alltoall's msg_size is known on every rank of a connected
        # graph only: its rules, decided per size, say components=1.
        self.assertEqual(tune.rule_head("neighbor_alltoall"), "neighbor_alltoall components=1")
        self.assertEqual(tune.rule_head("ineighbor_alltoall"),
                         "ineighbor_alltoall persistent=0 components=1")
        self.assertTrue(tune.per_size("neighbor_alltoall"))

    def test_all_to_all_rows_are_measured_past_the_hand_over(self):
        # One choice serves an Alltoallv row at every size: both grids must
        # reach well past shm's default large (48 KiB), where the window hands
        # the blocks to point-to-point and a row's winner on small blocks can
        # lose, more as the blocks grow (node_aware at P = 8: 0.87x at 64 KiB,
        # 0.4x at 1 MiB).
        for coll in ("alltoallv", "ialltoallv"):
            for grid in ("quick_sizes", "sizes"):
                sizes = tune.COLLECTIVES[coll][grid]
                self.assertGreaterEqual(max(sizes), 262144, (coll, grid))
                self.assertTrue(any(16384 < s <= 65536 for s in sizes), (coll, grid))


class Sweeps(unittest.TestCase):
    class Runner:
        def __init__(self, text):
            self.text = text

        def run(self, P, args):
            return type("Res", (), {"stdout": self.text})

    def test_counts_double_and_sizes_stay_at_their_default(self):
        listing = ("alltoallv algorithms at P=16 Q=16 N=1:\n"
                   "  pmpi\n"
                   "  scattered               block_count=1..16 (default 16)\n"
                   "  tuna_hier_coalesced     radix=2..17 (default 2) block_count=1..1 (default 1)\n"
                   "  segmented               linear=0..1 (default 0)\n"
                   "  shm                     large=0..1073741824 (default 49152)\n"
                   "  node_aware              block_count=1..0 (default 0)\n")
        specs = tune.algorithm_specs(self.Runner(listing), "alltoallv", 16, None, [])
        self.assertEqual(specs, ["pmpi", "scattered:block_count=1..16",
                                 "tuna_hier_coalesced:radix=2..17,block_count=1",
                                 "segmented:linear=0...1", "shm:large=49152"])


class Reports(unittest.TestCase):
    def test_validation_flags_only_an_interval_below_one(self):
        aa = tune.Estimate(1.0, 0.95, 1.05, 20)
        self.assertTrue(tune.Check(tune.Estimate(0.8, 0.75, 0.9, 20), aa).flagged())
        self.assertFalse(tune.Check(tune.Estimate(0.9, 0.8, 1.02, 20), aa).flagged())
        self.assertFalse(tune.Check(None, aa).flagged())

    def test_format(self):
        self.assertEqual(tune.Estimate(1.5, 1.41, 1.58, 40).fmt(), "1.50x [1.41, 1.58]")
        exact = tune.Estimate.from_exact(1.5)
        self.assertEqual(exact.fmt(), "1.50x (exact: simulated)")
        self.assertNotIn("[", exact.fmt())

    def test_exact_choice_of_a_simulation(self):
        rows = [{"collective": "alltoallv", "algorithm": a, "params": p, "P": "64",
                 "nodes": "2", "ppn": "32", "size": "16", "median_us": t, "status": "ok"}
                for a, p, t in (("pmpi", "", "100"), ("tuna", "radix=2", "50"),
                                ("linear", "", "99"))]
        d = tune.choose_exact(rows, 5.0)[("alltoallv", 64, 2, 32, 16)]
        self.assertEqual((d.status, d.spec), ("tuned", "tuna:radix=2"))
        self.assertTrue(d.est.exact)
        self.assertEqual(d.est.fmt(), "2.00x (exact: simulated)")
        rows[1]["median_us"] = "98"  # 1.02x: below the margin, exactly
        d = tune.choose_exact(rows, 5.0)[("alltoallv", 64, 2, 32, 16)]
        self.assertEqual((d.status, d.spec), ("baseline", "pmpi"))


def main():
    global tune
    if len(sys.argv) < 2:
        sys.exit("usage: test_tune_stats.py PATH/TO/coltune-tune")
    tune = load_tune(sys.argv.pop(1))
    unittest.main(verbosity=2)


if __name__ == "__main__":
    main()
