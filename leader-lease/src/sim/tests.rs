//! Safety and liveness of the election under the simulation (`docs/leader-lease.md` §5–§8).

use alloc::vec::Vec;

use proptest::prelude::*;

use super::*;
use crate::Record;

/// client-go's defaults, 15 s / 10 s / 2 s, and the request timeout they imply (5 s).
const LD: u64 = 15;

/// `docs/leader-lease.md` §6: the leader's renew at `s` commits at once but its answer takes
/// `delay`; every later request of the leader is lost. The follower polls every 100 ms, so it sees
/// the commit promptly and takes over about `LD` after it: the worst case of the counter-example,
/// made deterministic. Returns the simulation after 60 s.
fn counter_example(delay: Duration, client_go_timing: bool) -> Sim<impl Adversary> {
    const DELAYED_REQUEST: usize = 5;
    let adversary = move |r: &Request| match (r.node, r.index) {
        (0, DELAYED_REQUEST) => Delivery::Delivered {
            request: Duration::ZERO,
            response: delay,
        },
        (0, i) if i > DELAYED_REQUEST => Delivery::Lost,
        _ => Delivery::FAST,
    };
    let mut sim = Sim::new(adversary);
    let mut leader = configs(1, LD, 10_000, 2_000).remove(0);
    let mut follower = Config::new(
        "node-1",
        Duration::from_secs(LD),
        Duration::from_secs(10),
        Duration::from_millis(100),
    )
    .unwrap();
    leader.client_go_timing = client_go_timing;
    follower.client_go_timing = client_go_timing;
    let clock = Clock {
        offset: 0,
        rate_ppm: 0,
    };
    sim.add_node(leader, clock, 1, 0);
    sim.add_node(follower, clock, 2, millis(500));
    sim.run_until(secs(60));
    sim
}

/// `docs/leader-lease.md` §6: with client-go's timing, a renew answer delayed by more than
/// `LD − RD − RP` (3 s), yet within the 5 s request timeout, yields two leaders.
#[test]
fn client_go_timing_elects_two_leaders_when_a_renew_answer_is_late() {
    let sim = counter_example(Duration::from_secs(4), true);
    let (real, a, b) = sim.violation.expect("client-go timing should overlap");
    assert_eq!((a, b), (0, 1), "{}", sim.trace());
    // The delayed renew was sent at 8 s; B takes over about LD later, A gives up at 8+4+2+10.
    assert!(
        real > secs(8 + LD) && real < secs(8 + 4 + 2 + 10),
        "overlap at {real}\n{}",
        sim.trace()
    );
}

/// `docs/leader-lease.md` §6: below the threshold client-go's timing is safe.
#[test]
fn client_go_timing_is_safe_below_the_threshold() {
    let sim = counter_example(Duration::from_millis(2_900), true);
    assert_eq!(sim.violation, None, "{}", sim.trace());
    assert!(sim.log.contains(&Log::Started {
        node: 1,
        real: sim.first_start_after(secs(1)).unwrap()
    }));
}

/// `docs/leader-lease.md` §8: the anchored deadline removes the overlap for every delay up to the
/// request timeout.
#[test]
fn anchored_deadline_keeps_one_leader_under_the_counter_example() {
    for delay_ms in [2_900, 3_500, 4_000, 4_999, 5_000] {
        let sim = counter_example(Duration::from_millis(delay_ms), false);
        assert_eq!(sim.violation, None, "delay {delay_ms} ms\n{}", sim.trace());
        // B still takes over, once A's validity has run out.
        assert!(
            sim.log
                .iter()
                .any(|l| matches!(l, Log::Started { node: 1, .. })),
            "{}",
            sim.trace()
        );
    }
}

/// The counter-example's faults (a renew answered after 4 s, then silence) with the leader's
/// clock running slow and the follower's fast, both by `actual_ppm`, so only the anchored
/// deadline, not the renew round, can stop the leader in time.
fn drifting_clocks(configured_ppm: u32, actual_ppm: i64) -> Sim<impl Adversary> {
    let adversary = |r: &Request| match (r.node, r.index) {
        (0, 5) => Delivery::Delivered {
            request: Duration::ZERO,
            response: Duration::from_secs(4),
        },
        (0, i) if i > 5 => Delivery::Lost,
        _ => Delivery::FAST,
    };
    let mut sim = Sim::new(adversary);
    for (i, (rp, rate)) in [(2_000, -actual_ppm), (100, actual_ppm)]
        .into_iter()
        .enumerate()
    {
        let config = Config::builder(format!("node-{i}"))
            .retry_period(Duration::from_millis(rp))
            .drift_ppm(configured_ppm)
            .build()
            .unwrap();
        let clock = Clock {
            offset: secs(1000) * i as u64,
            rate_ppm: rate,
        };
        sim.add_node(config, clock, i as u64, millis(500) * i as u64);
    }
    sim.run_until(secs(60));
    sim
}

/// `docs/leader-lease.md` §5 assumption 2 and §8: the drift bound is load-bearing. Clocks 5 % apart
/// from real time (10 % from each other) break safety when 1 % is configured, and keep it when 5 %
/// is.
#[test]
fn safety_holds_exactly_when_drift_stays_within_the_bound() {
    let sim = drifting_clocks(10_000, 50_000);
    assert!(sim.violation.is_some(), "{}", sim.trace());
    let sim = drifting_clocks(50_000, 50_000);
    assert_eq!(sim.violation, None, "{}", sim.trace());
    assert!(
        sim.log
            .iter()
            .any(|l| matches!(l, Log::Started { node: 1, .. }))
    );
}

/// The choices of an exhaustive run: the first `depth` moves from a prefix of option indices
/// (then 0); past the depth each node repeats its
/// own last move (a fault persists), or option 0 if it had none. Records the number of options
/// at every choice point met, so the caller can enumerate the tree.
struct Script<'a> {
    prefix: &'a [usize],
    arities: Vec<usize>,
    options: &'a [Delivery],
    depth: usize,
    last: [usize; 2],
}

impl Adversary for Script<'_> {
    fn deliver(&mut self, request: &Request) -> Delivery {
        let i = self.arities.len();
        let node = request.node.min(1);
        if i >= self.depth {
            return self.options[self.last[node]];
        }
        self.arities.push(self.options.len());
        let choice = self.prefix.get(i).copied().unwrap_or(0);
        self.last[node] = choice;
        self.options[choice]
    }
}

/// Runs every sequence of the first `depth` adversary choices (later ones fast), for each
/// combination of extreme clock rates and start orders; returns how many runs were made.
fn explore(
    depth: usize,
    options: &[Delivery],
    horizon: u64,
    client_go_timing: bool,
) -> Result<usize, String> {
    let drift = Config::DEFAULT_DRIFT_PPM;
    let mut runs = 0;
    for rates in [[-1i64, 1], [1, -1], [0, 0]] {
        for start_b in [0, millis(300)] {
            let mut prefix: Vec<usize> = Vec::new();
            loop {
                let mut sim = Sim::new(Script {
                    prefix: &prefix,
                    arities: Vec::new(),
                    options,
                    depth,
                    last: [0; 2],
                });
                // Node 1 polls every 200 ms (candidates may be configured differently), so it
                // notices a change, and an expiry, as early as any schedule could.
                for (i, rp) in [1_000, 200].into_iter().enumerate() {
                    let mut config = configs(2, 8, 5_000, rp).remove(i);
                    config.client_go_timing = client_go_timing;
                    let clock = Clock {
                        offset: secs(100) * i as u64,
                        rate_ppm: rates[i] * i64::from(drift),
                    };
                    sim.add_node(config, clock, i as u64, if i == 0 { 0 } else { start_b });
                }
                sim.crash_at(0, secs(10));
                sim.restart_at(0, secs(12));
                sim.run_until(horizon);
                runs += 1;
                if let Some(bad) = sim.bad_transitions.first() {
                    return Err(format!("choices {prefix:?}: bad transition count {bad}"));
                }
                if let Some(v) = sim.violation {
                    return Err(format!(
                        "rates {rates:?}, choices {prefix:?}: two leaders {v:?}\n{}",
                        sim.trace()
                    ));
                }
                // Next sequence in depth-first order: bump the last choice that has room left.
                let arities = sim.adversary.arities;
                prefix.resize(depth.min(arities.len()), 0);
                while let Some(last) = prefix.len().checked_sub(1) {
                    if prefix[last] + 1 < arities[last] {
                        prefix[last] += 1;
                        break;
                    }
                    prefix.pop();
                }
                if prefix.is_empty() {
                    break;
                }
            }
        }
    }
    Ok(runs)
}

/// The adversary's moves in the exhaustive runs: on time, an answer just within the 2.5 s
/// request timeout, a request that commits just before the timeout, a lost request.
const MOVES: [Delivery; 4] = [
    Delivery::FAST,
    Delivery::Delivered {
        request: Duration::ZERO,
        response: Duration::from_millis(2_400),
    },
    Delivery::Delivered {
        request: Duration::from_millis(2_400),
        response: Duration::ZERO,
    },
    Delivery::Lost,
];

/// `docs/leader-lease.md` §8: exhaustive over small bounds (two candidates, 8/5/1 s and 8/5/0.2 s,
/// clocks at ±1 %, the first adversary choices, a crash and restart of node 0): never two leaders.
#[test]
fn anchored_deadline_is_safe_exhaustively_for_small_bounds() {
    let runs = explore(6, &MOVES, secs(24), false).unwrap_or_else(|e| panic!("{e}"));
    assert!(runs > 10_000, "explored only {runs} runs");
}

/// The same exploration finds the counter-example when client-go's timing is used.
#[test]
fn exhaustive_exploration_finds_the_client_go_overlap() {
    let error = explore(6, &MOVES, secs(24), true).expect_err("client-go timing should overlap");
    assert!(error.contains("two leaders"), "{error}");
}

/// A random adversary: each request is lost with probability `loss`/256, else delayed
/// uniformly up to the maxima.
struct Random {
    state: u64,
    loss: u8,
    max_request: u64,
    max_response: u64,
}

impl Random {
    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

impl Adversary for Random {
    fn deliver(&mut self, _: &Request) -> Delivery {
        if (self.next() & 0xff) < u64::from(self.loss) {
            return Delivery::Lost;
        }
        let request = Duration::from_nanos(self.next() % (self.max_request + 1));
        let response = Duration::from_nanos(self.next() % (self.max_response + 1));
        Delivery::Delivered { request, response }
    }
}

#[derive(Clone, Debug)]
enum Fault {
    Crash,
    Restart,
    Release,
}

fn arb_fault() -> impl Strategy<Value = (u64, usize, Fault)> {
    (
        0..secs(120),
        0usize..5,
        prop_oneof![
            Just(Fault::Crash),
            Just(Fault::Restart),
            Just(Fault::Release)
        ],
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// `docs/leader-lease.md` §8: random larger cases: 2–5 candidates, clocks anywhere within ±ρ,
    /// random delays up to beyond the request timeout, loss, crashes, restarts and releases.
    #[test]
    fn anchored_deadline_is_safe_under_random_faults(
        seed in any::<u64>(),
        count in 2usize..=5,
        rates in proptest::collection::vec(-10_000i64..=10_000, 5),
        loss in 0u8..64,
        max_request_ms in 0u64..6_000,
        max_response_ms in 0u64..6_000,
        faults in proptest::collection::vec(arb_fault(), 0..8),
        fast_polling in any::<bool>(),
    ) {
        let adversary = Random {
            state: seed,
            loss,
            max_request: millis(max_request_ms),
            max_response: millis(max_response_ms),
        };
        let mut sim = Sim::new(adversary);
        let rp = if fast_polling { 200 } else { 2_000 };
        for (i, config) in configs(count, LD, 10_000, rp).into_iter().enumerate() {
            let clock = Clock { offset: secs(10_000) * i as u64, rate_ppm: rates[i] };
            sim.add_node(config, clock, seed ^ i as u64, millis(137) * i as u64);
        }
        for (real, node, fault) in faults {
            let node = node % count;
            match fault {
                Fault::Crash => sim.crash_at(node, real),
                Fault::Restart => sim.restart_at(node, real),
                Fault::Release => sim.release_at(node, real),
            }
        }
        sim.run_until(secs(150));
        prop_assert_eq!(sim.violation, None, "{}", sim.trace());
        // `docs/leader-lease.md` §4: leaderTransitions changes only when the holder does.
        prop_assert!(sim.bad_transitions.is_empty(), "{:?}", sim.bad_transitions);
    }
}

/// Three candidates with the defaults, 20 ms each way, clocks at the drift extremes.
fn stable_sim() -> Sim<impl Adversary> {
    let delay = Duration::from_millis(20);
    let mut sim = Sim::new(move |_: &Request| Delivery::Delivered {
        request: delay,
        response: delay,
    });
    for (i, (config, clock)) in configs(3, LD, 10_000, 2_000)
        .into_iter()
        .zip(extreme_clocks(3, 10_000))
        .enumerate()
    {
        sim.add_node(config, clock, i as u64, 0);
    }
    sim
}

/// Liveness: with an empty store and bounded delays, the first attempt elects a leader, and
/// with a stable store it keeps leading.
#[test]
fn a_leader_is_elected_at_once_and_stays() {
    let mut sim = stable_sim();
    sim.run_until(secs(120));
    assert_eq!(sim.violation, None);
    assert!(
        sim.first_start_after(0).unwrap() <= millis(100),
        "{}",
        sim.trace()
    );
    assert_eq!(
        sim.log.len(),
        1,
        "leadership changed hands:\n{}",
        sim.trace()
    );
    assert_eq!(sim.leaders().len(), 1);
}

/// Liveness: a record left by a dead holder is taken over within LD + 2.2·RP (the jittered
/// retry) plus the request delays, and the transition is counted.
#[test]
fn a_stale_record_is_taken_over_after_one_lease_duration() {
    let mut sim = stable_sim();
    sim.preload(Record {
        holder_identity: crate::text::text("gone"),
        lease_duration_seconds: 15,
        leader_transitions: 4,
        ..Record::default()
    });
    sim.run_until(secs(60));
    let elected = sim.first_start_after(0).unwrap();
    assert!(
        elected >= secs(LD) / 101 * 100,
        "took over too early at {elected}"
    );
    assert!(
        elected <= secs(LD) + millis(4_400) + millis(200),
        "elected only at {elected}\n{}",
        sim.trace()
    );
    let leader = sim.leaders()[0];
    assert_eq!(
        sim.elector(leader)
            .unwrap()
            .fencing_token()
            .unwrap()
            .transitions,
        5
    );
}

/// Liveness: after the leader crashes another takes over within about LD.
#[test]
fn a_new_leader_follows_a_crash_within_about_one_lease_duration() {
    let mut sim = stable_sim();
    sim.run_until(secs(30));
    let old = sim.leaders()[0];
    sim.crash_at(old, secs(30));
    sim.run_until(secs(90));
    let elected = sim.first_start_after(secs(30)).unwrap();
    assert!(
        elected <= secs(30 + LD) + millis(4_400) + millis(200),
        "elected only at {elected}\n{}",
        sim.trace()
    );
    assert_eq!(sim.violation, None);
    assert_ne!(sim.leaders(), [old]);
}

/// `docs/leader-lease.md` §4 (ReleaseOnCancel): a released lease is taken over within one jittered
/// retry.
#[test]
fn a_released_lease_is_taken_over_within_one_retry() {
    let mut sim = stable_sim();
    sim.run_until(secs(30));
    let old = sim.leaders()[0];
    sim.release_at(old, secs(30));
    sim.run_until(secs(60));
    assert!(sim.elector(old).unwrap().is_released());
    let elected = sim.first_start_after(secs(30)).unwrap();
    assert!(
        elected <= secs(30) + millis(4_400) + millis(200),
        "elected only at {elected}\n{}",
        sim.trace()
    );
    assert_eq!(sim.violation, None);
}
