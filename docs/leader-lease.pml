/*
 * leader-lease.pml: the project's Spin model of lease-based leader election.
 *
 * What it checks: at no tick do both candidates believe they lead. Two candidates share one
 * record guarded by a version number (compare-and-swap). VARIANT 0 uses client-go's timing:
 * a leader believes it leads until a renew round fails, RD after the round began, and the next
 * round begins RP after the last successful answer arrived. VARIANT 1 adds the anchored
 * deadline of leader-lease: the leader also steps down MARGIN ticks before LD has passed since
 * it SENT its last successful write. See docs/leader-lease.md, sections 6 to 8.
 *
 * Time is counted in whole ticks (1 tick = 1 s) and advances only when every candidate is
 * waiting (the `timeout` idiom); all clocks run at the same rate. Each request may be delayed
 * by 0 or XMAX ticks on its way to the store, each answer by 0 or DMAX ticks on its way back;
 * a leader's renewal may be lost; the acquire loop waits RP or RP + 1 ticks between attempts.
 *
 * Run (Debian packages spin and gcc):
 *   spin -a -DVARIANT=0 -DLD=8 -DRD=5 -DRP=1 -DDMAX=3 -DXMAX=0 -DHORIZON=20 leader-lease.pml
 *   gcc -O2 -DSAFETY -DBFS -DCOLLAPSE -DMEMLIM=8000 -o pan pan.c
 *   ./pan -E        (-E: end states are not checked; a violation prints "assertion violated";
 *                   "Search not completed" without a violation means MEMLIM was too small)
 *   spin -t -p -g -DVARIANT=0 -DLD=8 -DRD=5 -DRP=1 -DDMAX=3 -DXMAX=0 -DHORIZON=20 leader-lease.pml
 *                   (replays the trail of a violation; give the same -D flags)
 */

#ifndef LD
#define LD 15      /* lease duration, ticks */
#endif
#ifndef RD
#define RD 10      /* renew deadline */
#endif
#ifndef RP
#define RP 2       /* retry period */
#endif
#ifndef DMAX
#define DMAX 5     /* the delay an answer may take */
#endif
#ifndef XMAX
#define XMAX 1     /* the delay a request may take */
#endif
#ifndef MARGIN
#define MARGIN 1   /* epsilon of the anchored deadline (VARIANT 1) */
#endif
#ifndef VARIANT
#define VARIANT 0
#endif
#ifndef HORIZON
#define HORIZON 24 /* the last tick explored */
#endif

#define NOBODY 2

byte now = 0;             /* the current tick */
byte ver = 0;             /* version of the stored record */
byte holder = NOBODY;     /* holder named in the stored record */
bool leads[2];            /* what each candidate believes */

/* Block until tick `t`, or until the horizon ends the exploration. */
#define SLEEP_UNTIL(t) (now >= (t) || now >= HORIZON)
/* Block until tick `t` or the deadline `d`, whichever comes first. */
#define SLEEP_OR_DEADLINE(t, d) (now >= (t) || now >= (d))
#define DELAY(v, max) if :: v = 0 :: v = max fi

active proctype ticker()
{
  do
  :: timeout ->
     assert(!(leads[0] && leads[1]));
     if
     :: now < HORIZON -> now++
     :: else -> break
     fi
  od
}

proctype candidate(byte me)
{
  byte seen_ver = 255, seen_holder = NOBODY, seen_at = 0;
  byte start, sent_at, committed_at, delay, got_ver, got_holder;
  byte last_sent, round_end, limit;
  bool won;

  SLEEP_UNTIL(me);                             /* the candidates start one tick apart */

campaign:
  if
  :: now >= HORIZON -> goto finished
  :: else -> skip
  fi;
  start = now;
  /* Read the record. */
  DELAY(delay, XMAX); SLEEP_UNTIL(start + delay);
  d_step { got_ver = ver; got_holder = holder; committed_at = now };
  DELAY(delay, DMAX); SLEEP_UNTIL(committed_at + delay);
  if
  :: got_ver != seen_ver ->                    /* a change: remember when it was seen */
     seen_ver = got_ver; seen_holder = got_holder; seen_at = now
  :: else -> skip
  fi;
  got_ver = 0; got_holder = 0; committed_at = 0; delay = 0;
  if
  :: seen_holder != NOBODY && seen_holder != me && seen_at + LD > start ->
     goto retry_later                          /* held by the other candidate */
  :: else -> skip
  fi;
  /* Claim it with a compare-and-swap on the version read. */
  sent_at = now;
  DELAY(delay, XMAX); SLEEP_UNTIL(sent_at + delay);
  d_step {
    won = (ver == seen_ver);
    if
    :: won -> ver++; holder = me; seen_ver = ver
    :: else -> skip
    fi;
    committed_at = now
  };
  DELAY(delay, DMAX); SLEEP_UNTIL(committed_at + delay);
  committed_at = 0; delay = 0;
  if
  :: won && now < HORIZON -> last_sent = sent_at; leads[me] = true; goto round
  :: else -> skip
  fi;
retry_later:
  if                                           /* the acquire loop's jitter */
  :: start = now + RP
  :: start = now + RP + 1
  fi;
  SLEEP_UNTIL(start);
  goto campaign;

round:                                         /* a renew round begins */
  if
  :: now >= HORIZON -> goto finished           /* the end of the exploration */
  :: else -> skip
  fi;
  round_end = now + RD;
#if VARIANT == 1
  limit = last_sent + LD - MARGIN;
  if
  :: limit < round_end -> round_end = limit
  :: else -> skip
  fi;
#endif
renew:
  sent_at = now;
  if
  :: skip;                                     /* this renewal is lost */
     SLEEP_OR_DEADLINE(sent_at + RP, round_end);
     if
     :: now >= round_end -> goto step_down
     :: else -> goto renew
     fi
  :: skip;                                     /* this renewal reaches the store */
     DELAY(delay, XMAX); SLEEP_OR_DEADLINE(sent_at + delay, round_end);
     if
     :: now < sent_at + delay -> goto step_down
     :: else -> skip
     fi;
     d_step {
       won = (ver == seen_ver);
       if
       :: won -> ver++; seen_ver = ver
       :: else -> skip
       fi;
       committed_at = now
     };
     DELAY(delay, DMAX); SLEEP_OR_DEADLINE(committed_at + delay, round_end);
     if
     :: now < committed_at + delay -> goto step_down
     :: else -> skip
     fi;
     committed_at = 0; delay = 0;
     if
     :: won ->
        last_sent = sent_at;
#if VARIANT == 1
        limit = last_sent + LD - MARGIN;
        start = now + RP;
        SLEEP_OR_DEADLINE(start, limit);
        if
        :: now >= limit -> goto step_down
        :: else -> goto round
        fi
#else
        start = now + RP;
        SLEEP_UNTIL(start);
        goto round
#endif
     :: else ->                                /* superseded: client-go waits out the round */
        SLEEP_UNTIL(round_end);
        goto step_down
     fi
  fi;

step_down:
  leads[me] = false;
finished:
  skip
}

init
{
  atomic { run candidate(0); run candidate(1) }
}
