"""Defaults a judge route and the offline tools share, with no imports (the gateway reads them
when it validates settings, before numpy or onnxruntime are loaded).

The online controller's (`calibrate.OnlineThreshold`) bounds are the whole score range: a family
whose scores sit below the card's (an agent the judge never saw, with a lower base rate) needs a
threshold below any fixed floor to reach its share; a floor of 0.05 held such a family at 14%
instead of 40% on replay (`tandem judge share`).
"""

ADAPT_RATE = 0.01  # threshold step per decision, in score units
THRESHOLD_BOUNDS = (0.0, 1.0)
# The per-trajectory term of the controller, relative to its threshold (`calibrate.OnlineThreshold`):
# a run at a cloud share 0.6 over the target needs a score 30% higher for its next cloud step.
TRAJECTORY_GAIN = 0.5
MAX_TRAJECTORY_GAIN = 4.0  # (the threshold stays within its bounds whatever the gain)
