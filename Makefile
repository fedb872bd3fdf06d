# Everything a fresh machine needs: `make demo` and `make test` create and reuse .venv.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# make differential: N random cases of seed SEED through dratwin and the upstream allocator (tools/oracle).
N ?= 10000
SEED ?= 1
GO ?= go
ORACLE := build/oracle/oracle

# The report's plotting library: Apache ECharts from its npm package, pinned by version and checksum
# (committed; `make vendor` fetches it again).
ECHARTS_VERSION := 6.1.0
ECHARTS_SHA256 := b66b25aeb4df84e33199dc21694014d336d222cbd9deb0e5a7c14bd6aa0d0fd0
ECHARTS := src/dratwin/report/vendor/echarts.min.js

# Prometheus' promtool, for the test that backfills the OpenMetrics output (tests/metrics/test_promtool.py).
PROMETHEUS_VERSION := v0.316.0
PROMTOOL := build/promtool/promtool

.PHONY: demo test lint typecheck conformance bench oracle differential fuzz clean vendor promtool

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The bundle is committed (src/dratwin/report/vendor/README.md); this fetches it again and checks it.
vendor:
	@command -v npm >/dev/null 2>&1 || { echo "make vendor: npm is not installed; the report needs ECharts from its npm package" >&2; exit 2; }
	rm -rf build/npm/echarts && mkdir -p build/npm/echarts
	cd build/npm/echarts && npm pack --silent echarts@$(ECHARTS_VERSION) >/dev/null && tar xzf echarts-$(ECHARTS_VERSION).tgz
	echo "$(ECHARTS_SHA256)  build/npm/echarts/package/dist/echarts.min.js" | sha256sum -c --quiet -
	cp build/npm/echarts/package/dist/echarts.min.js build/npm/echarts/package/LICENSE build/npm/echarts/package/NOTICE $(dir $(ECHARTS))

promtool: $(PROMTOOL)

$(PROMTOOL):
	@command -v $(GO) >/dev/null 2>&1 || { echo "make promtool: Go is not installed; promtool is built from the Go module proxy" >&2; exit 2; }
	GOBIN=$(abspath $(@D)) $(GO) install github.com/prometheus/prometheus/cmd/promtool@$(PROMETHEUS_VERSION)

demo: $(STAMP)
	@# Two simulated days of an EKS GPU fleet, four variants x three seeds side by side, and the report page
	@# (some training pods are still waiting when the two days end: exit status 1).
	$(BIN)/dratwin simulate examples/simulate/eks-gpu-fleet.yaml --report build/demo/report.html || test $$? -eq 1
	@# Two teams' ClusterQueues borrowing in one cohort for a day, with preemption: the Queues section of the page.
	$(BIN)/dratwin simulate examples/simulate/kueue-teams.yaml --report build/demo/queues.html
	$(BIN)/dratwin validate -f examples/
	$(BIN)/dratwin schedule -f examples/
	@# Trainium with the Neuron DRA driver: the Neuron docs' connected subsets and Neuron + EFA of one group.
	$(BIN)/dratwin schedule -f examples/neuron/
	@# A pod whose DeviceClass does not exist stays Pending (exit status 1); explain says why.
	$(BIN)/dratwin explain pod/ml/llm-h200 -f examples/ -f examples/missing-deviceclass/ || test $$? -eq 1
	@# The DRA allocator on its own: a claim that fits no device of the node, and the reason.
	$(BIN)/dratwin allocate -f examples/ --node p5-node-1 --claim ml/llama-70b-fp16-gpu || test $$? -eq 1
	@# NVIDIA's ComputeDomain demos on a P6e-GB200 UltraServer: channels, and the IMEX daemons that follow.
	$(BIN)/dratwin schedule -f examples/compute-domain/
	@# What Karpenter would launch for the plan example, from zero (its MIG pods can never be provisioned: 1).
	$(BIN)/dratwin plan -f examples/deviceclasses.yaml -f examples/plan/ || test $$? -eq 1
	@# Kueue: quota blocks while a node is idle; quota admits what DRA cannot place (both exit status 1).
	$(BIN)/dratwin explain job/team-a/finetune -f examples/deviceclasses.yaml -f examples/queues/cluster.yaml -f examples/queues/team-quota/ || test $$? -eq 1
	$(BIN)/dratwin explain job/llm/tp-bench -f examples/deviceclasses.yaml -f examples/queues/cluster.yaml -f examples/queues/dra-unplaceable/ || test $$? -eq 1
	@# Kueue's topology-aware scheduling: a rack-bound gang placed in one rack, one too wide for any rack (1).
	$(BIN)/dratwin schedule -f examples/queues/tas/ || test $$? -eq 1
	@# Kueue's pod integrations: a pod group, a Deployment's replicas, a StatefulSet; a group short of a pod stays gated (1).
	$(BIN)/dratwin schedule -f examples/deviceclasses.yaml -f examples/queues/cluster.yaml -f examples/queues/pod-groups/ || test $$? -eq 1

test: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/mypy
	$(BIN)/python -m pytest
	$(BIN)/python conformance/run --cli $(BIN)/dratwin

lint: $(STAMP)
	$(BIN)/ruff check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

conformance: $(STAMP)
	$(BIN)/python conformance/run --cli $(BIN)/dratwin
	$(BIN)/python conformance/run --cli $(BIN)/dratwin conformance/random

bench: $(STAMP)
	@$(MAKE) --no-print-directory oracle || echo "note: no Go oracle; the upstream benchmarks report dratwin only" >&2
	$(BIN)/dratwin bench

# The upstream allocator as an oracle: needs Go 1.26 and the Go module proxy (make test does not).
oracle: $(ORACLE)

$(ORACLE): tools/oracle/go.mod tools/oracle/go.sum $(wildcard tools/oracle/*.go)
	@command -v $(GO) >/dev/null 2>&1 || { echo "make oracle: Go is not installed; tools/oracle needs Go 1.26 and the Go module proxy" >&2; exit 2; }
	cd tools/oracle && $(GO) vet . && $(GO) test -count=1 . && $(GO) build -o ../../$(ORACLE) .

differential: $(STAMP) $(ORACLE)
	$(BIN)/python -m dratwin.differential --oracle $(ORACLE) -n $(N) --seed $(SEED)

# A fuzz campaign over every command (tests/fuzz): FUZZ_EXAMPLES inputs per strategy; inputs that break the
# contract (traceback, hang, bad exit status, no JSON) are written to build/fuzz/crashes/.
FUZZ_EXAMPLES ?= 500
fuzz: $(STAMP)
	DRATWIN_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/python -m pytest tests/fuzz -q -p no:cacheprovider

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info .pytest_cache .mypy_cache .ruff_cache
