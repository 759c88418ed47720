"""The one road every answer takes at the edge (``POST /v1/estimate``, permalinks, ``/v1/ask``,
the command line): registered names, the caches, timings and the link.

The core stays pure: a registered model's name is replaced by its architecture here, before
the engine sees the request.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from dataclasses import dataclass, replace
from typing import Any

from service.answer_json import answer_bytes, answer_from_dict, answer_text, text_with_link
from service.answers import compute_answer
from service.core.hardware.gpus import Gpu
from service.core.job.request import EstimateRequest
from service.core.model.lookup import BARE_SIZE
from service.core.model.presets import lookup_preset
from service.core.recent import Recent
from service.core.report.answer_types import Answer
from service.fingerprint import engine_fingerprint
from service.observability import Metrics
from service.permalink import link, normalise, query_string
from service.pool_tasks import answer_outcome, raise_error
from service.registry import Registry
from service.store.base import Store, StoreUnavailable
from service.work_pool import WorkPool

HOT_ENTRIES = 1024  # answers kept ready to send per process (~9 kB each)


@dataclass(frozen=True, slots=True)
class Prepared:
    engine: EstimateRequest  # what the core computes (registered name -> arch)
    canonical: EstimateRequest  # what the link encodes
    registered_arch: str  # JSON of a registered model's architecture, else ""


class Estimates:
    def __init__(self, store: Store, registry: Registry, metrics: Metrics, ttl_s: int,
                 fleet: tuple[Gpu, ...] | None = None, pool: WorkPool | None = None) -> None:
        self.store = store
        self.fleet = fleet  # the GPU types fixes may move to; None: the default fleet
        self.pool = pool  # where the planner runs; None: in place (the command line, tests)
        self.registry = registry
        self.metrics = metrics
        self.ttl_s = ttl_s
        # stated fields + base URL -> the JSON body of POST /v1/estimate, ready to send
        self._hot: Recent[str, bytes] = Recent(HOT_ENTRIES)

    async def prepare(self, request: EstimateRequest) -> Prepared:
        canonical = normalise(request)
        model = canonical.model
        if model is None or canonical.arch is not None or lookup_preset(model) is not None \
                or BARE_SIZE.match(model):
            return Prepared(canonical, canonical, "")
        document = await self.registry.get(model)
        if document is None:
            raise self.registry.unknown(model)
        canonical = replace(canonical, model=document["id"])
        engine = replace(canonical, model=None, arch=document["arch"])
        return Prepared(engine, canonical, json.dumps(document["arch"], sort_keys=True))

    def key(self, prepared: Prepared, fits_on: bool) -> str:
        fleet = ",".join(g.id for g in self.fleet) if self.fleet is not None else ""
        text = query_string(prepared.canonical) + "|" + prepared.registered_arch + "|" + fleet
        digest = hashlib.sha256(text.encode()).hexdigest()[:32]
        return f"est:{engine_fingerprint()}:{'f' if fits_on else 'a'}:{digest}"

    async def answer(self, request: EstimateRequest, base_url: str,
                     fits_on: bool = False) -> Answer:
        """The answer, from the cache when there, with its permalink."""
        return await self._answer_prepared(await self.prepare(request), base_url, fits_on)

    async def _answer_prepared(self, prepared: Prepared, base_url: str,
                               fits_on: bool) -> Answer:
        url = link(base_url, prepared.canonical)
        if self._runs_planner(prepared, fits_on):
            text = await self._planner_text(prepared, fits_on)
            return replace(answer_from_dict(json.loads(text)), link=url)
        return replace(self._in_place(prepared.engine), link=url)

    @staticmethod
    def _runs_planner(prepared: Prepared, fits_on: bool) -> bool:
        return fits_on or prepared.engine.gpu is not None

    def _in_place(self, request: EstimateRequest) -> Answer:
        """An estimate alone takes ~0.1 ms, less than one Redis round trip (~0.2 ms) or a trip
        to a worker: computed on the spot, never cached in the store."""
        self.metrics.cache_misses.inc()
        result = compute_answer(request, fits_on=False, fleet=self.fleet)
        self.metrics.estimate_seconds.observe(result.estimate_s)
        return result.answer

    async def _planner_text(self, prepared: Prepared, fits_on: bool) -> str:
        """The link-less JSON of an answer that runs the planner (milliseconds of work, worth
        a store round trip): from the shared cache, else from a worker (in place without a
        pool), then cached."""
        key = self.key(prepared, fits_on)
        text = await self._cached(key)
        if text is not None:
            return text
        text, estimate_s, planner_s = await self._compute(prepared.engine, fits_on)
        self.metrics.estimate_seconds.observe(estimate_s)
        self.metrics.planner_seconds.observe(planner_s)
        with contextlib.suppress(StoreUnavailable):
            await self.store.cache_set(key, text, self.ttl_s)
        return text

    async def _compute(self, request: EstimateRequest, fits_on: bool
                       ) -> tuple[str, float, float]:
        """(the answer's ``answer_text``, seconds estimating, seconds planning)."""
        if self.pool is not None:
            fleet = tuple(g.id for g in self.fleet) if self.fleet is not None else None
            outcome = await self.pool.run(answer_outcome, request, fits_on, fleet)
            if outcome.error is not None:
                raise_error(outcome.error)
            return outcome.text, outcome.estimate_s, outcome.planner_s
        result = compute_answer(request, fits_on=fits_on, fleet=self.fleet)
        return answer_text(result.answer), result.estimate_s, result.planner_s

    async def answer_json(self, stated: dict[str, Any], base_url: str) -> bytes:
        """``POST /v1/estimate``'s JSON body, as bytes.

        In front of the shared cache, each process keeps its most recent answers ready to send
        (no store round trip, no parsing or serialising again), for requests whose answer
        depends only on the request and the code: built-in presets, bare sizes and inline
        architectures, never a registered model. The engine's version is fixed for the life of
        a process, so an entry never goes stale."""
        hot_key = json.dumps(stated, sort_keys=True, separators=(",", ":")) + "|" + base_url
        ready = self._hot.get(hot_key)
        if ready is not None:
            self.metrics.cache_hits.inc()
            return ready
        request = EstimateRequest(**stated)
        prepared = await self.prepare(request)
        url = link(base_url, prepared.canonical)
        if self._runs_planner(prepared, fits_on=False):
            data = text_with_link(await self._planner_text(prepared, fits_on=False), url)
        else:
            data = answer_bytes(replace(self._in_place(prepared.engine), link=url))
        if not prepared.registered_arch:
            self._hot.put(hot_key, data)
        return data

    async def _cached(self, key: str) -> str | None:
        try:
            text = await self.store.cache_get(key)
        except StoreUnavailable:
            text = None
        if text is None:
            self.metrics.cache_misses.inc()
            return None
        self.metrics.cache_hits.inc()
        return text
