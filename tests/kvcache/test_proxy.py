"""The learned semantic proxy: features from a real cache, the shipped weights, the score it feeds."""

from __future__ import annotations

import json

import pytest
import torch

from codeagent.kvcache.proxy import FEATURES, WEIGHTS, Proxy, features, shipped
from codeagent.kvcache.scoring import semantic


def _filled(make_engine, code_ids, **kv):
    eng = make_engine(policy="default", min_tokens=0, **kv)
    eng.append_tokens(code_ids[:300])
    return eng


def test_features_describe_every_slot(make_engine, code_ids):
    eng = _filled(make_engine, code_ids)
    x = features(eng.manager.view(eng.state))
    assert x.shape == (len(eng.table), len(FEATURES))
    assert bool(torch.isfinite(x).all())
    assert float(x.min()) >= 0.0 and float(x.max()) <= 1.0
    one_hots = [name for name in FEATURES if name.startswith("kind_")]
    kinds = x[:, [FEATURES.index(n) for n in one_hots]]
    assert torch.equal(kinds.sum(dim=1), torch.ones(len(x)))  # exactly one kind per slot
    age = x[:, FEATURES.index("age")]
    assert float(age[0]) > float(age[-1])  # the oldest slot is the first


def test_shipped_weights_load_and_score_every_slot(make_engine, code_ids):
    eng = _filled(make_engine, code_ids)
    proxy = shipped()
    assert proxy.names == FEATURES
    assert WEIGHTS.stat().st_size < 16_000  # a few KB, shipped with the package
    pred = proxy.predict(eng.manager.view(eng.state))
    assert pred.shape == (len(eng.table),) and bool(torch.isfinite(pred).all())
    assert float(pred.std()) > 0  # it tells slots apart


def test_weights_round_trip_and_reject_other_features(make_engine, code_ids):
    eng = _filled(make_engine, code_ids)
    view = eng.manager.view(eng.state)
    again = Proxy.from_json(json.loads(json.dumps(shipped().to_json())))
    assert torch.allclose(again.predict(view), shipped().predict(view), atol=1e-3)
    stale = Proxy.from_json({**shipped().to_json(), "features": [*FEATURES[:-1], "gone"]})
    with pytest.raises(ValueError, match="retrain"):
        stale.predict(view)


def test_proxy_share_changes_the_semantic_term_and_the_budget_holds(make_engine, code_ids):
    eng = _filled(make_engine, code_ids)
    view = eng.manager.view(eng.state)
    base = semantic(view)
    learned = semantic(view, proxy_weight=1.0)
    assert learned.shape == base.shape and not torch.allclose(learned, base)
    assert float(learned.min()) >= 0.0 and float(learned.max()) <= 1.0
    eng2 = _filled(make_engine, code_ids, proxy_weight=0.5)
    eng2.manager.enforce(eng2.state, budget=120)
    assert len(eng2.table) <= 120
