"""OpenSearch Benchmark workload plugin written by bench/load.py (copied next to the generated
workload.json): a parameter source that replays one search body per query, cycling, each client
starting at its own offset, exactly as r2med-harness's load phase does."""

import json
import os


class BodiesParamSource:
    def __init__(self, workload, params, **kwargs):
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), params["bodies"])
        with open(path, encoding="utf-8") as fh:
            self._bodies = json.load(fh)
        self._index = params["index"]
        self._params = params
        self._next = 0
        self._step = 1
        self.infinite = True

    def partition(self, partition_index, total_partitions):
        clone = BodiesParamSource.__new__(BodiesParamSource)
        clone.__dict__.update(self.__dict__)
        clone._next = partition_index
        clone._step = total_partitions
        return clone

    def size(self):
        return None

    def params(self):
        body = self._bodies[self._next % len(self._bodies)]
        self._next += self._step
        return {"index": self._index, "body": dict(body), "request-params": {}, "detailed-results": False}


def register(registry):
    registry.register_param_source("r2med-bodies", BodiesParamSource)
