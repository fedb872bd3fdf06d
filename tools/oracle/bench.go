package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"time"

	v1 "k8s.io/api/core/v1"
)

// benchSpec is what `oracle bench` reads on standard input: a cluster (the case format's
// objects), the claims of one pod and the nodes that Filter would try, in order.
type benchSpec struct {
	Features         []string          `json:"features"`
	Objects          []json.RawMessage `json:"objects"`
	Claims           []string          `json:"claims"`
	Nodes            []string          `json:"nodes"`
	Repeats          int               `json:"repeats"`
	MinRepeatSeconds float64           `json:"minRepeatSeconds"`
}

// benchResult: per-call times of Allocate (one figure per repeat, each the mean of Number
// calls), and on which of the nodes one sweep allocated, so the caller can check the answers.
type benchResult struct {
	Variant        string    `json:"variant"`
	PerCallNs      []float64 `json:"perCallNs"`
	Number         int       `json:"number"`
	AllocatedNodes []string  `json:"allocatedNodes"`
	GoVersion      string    `json:"goVersion"`
	Module         string    `json:"module"`
}

// runBench times allocator.Allocate(node, claims) with the allocator built once, as
// kube-scheduler builds it once per pod (PreFilter) and calls it once per node (Filter).
// Calls cycle through the nodes. The loop shape matches dratwin's benchmark runner: one
// untimed call, a power of ten of calls per repeat, long enough to be measured exactly.
func runBench(arguments []string, stdin io.Reader, stdout io.Writer) error {
	flags := flag.NewFlagSet("oracle bench", flag.ContinueOnError)
	if err := flags.Parse(arguments); err != nil {
		return err
	}
	var spec benchSpec
	if err := json.NewDecoder(stdin).Decode(&spec); err != nil {
		return fmt.Errorf("reading the benchmark spec from standard input: %w", err)
	}
	p, nodes, err := prepareBench(spec)
	if err != nil {
		return err
	}
	allocator, variant, err := newAllocator("", p.features, p.state, p.classes, p.slices)
	if err != nil {
		return err
	}
	ctx := context.Background()
	next := 0
	call := func() error {
		node := nodes[next%len(nodes)]
		next++
		_, err := allocator.Allocate(ctx, node, p.claims)
		return err
	}
	result := benchResult{Variant: variant, GoVersion: runtime.Version(), Module: moduleVersion()}
	for _, node := range nodes {
		results, err := allocator.Allocate(ctx, node, p.claims)
		if err != nil {
			return fmt.Errorf("node %s: %w", node.Name, err)
		}
		if results != nil {
			result.AllocatedNodes = append(result.AllocatedNodes, node.Name)
		}
	}
	number, err := calibrate(call, spec.MinRepeatSeconds)
	if err != nil {
		return err
	}
	result.Number = number
	for range max(spec.Repeats, 1) {
		runtime.GC()
		elapsed, err := loop(call, number)
		if err != nil {
			return err
		}
		result.PerCallNs = append(result.PerCallNs, float64(elapsed.Nanoseconds())/float64(number))
	}
	return json.NewEncoder(stdout).Encode(result)
}

func prepareBench(spec benchSpec) (*prepared, []*v1.Node, error) {
	p, err := prepare(caseInput{Features: spec.Features, Objects: spec.Objects, Allocate: spec.Claims,
		Node: firstOr(spec.Nodes, "")})
	if err != nil {
		return nil, nil, err
	}
	objects, err := decodeObjects(spec.Objects)
	if err != nil {
		return nil, nil, err
	}
	nodes := make([]*v1.Node, 0, len(spec.Nodes))
	for _, name := range spec.Nodes {
		node, found := objects.nodes[name]
		if !found {
			return nil, nil, fmt.Errorf("node %q is not in the objects", name)
		}
		nodes = append(nodes, node)
	}
	if len(nodes) == 0 {
		return nil, nil, fmt.Errorf("the spec names no node")
	}
	return p, nodes, nil
}

func firstOr(values []string, fallback string) string {
	if len(values) == 0 {
		return fallback
	}
	return values[0]
}

func calibrate(call func() error, minSeconds float64) (int, error) {
	budget := time.Duration(max(minSeconds, 0.001) * float64(time.Second))
	number := 1
	for number < 1_000_000 {
		elapsed, err := loop(call, number)
		if err != nil {
			return 0, err
		}
		if elapsed >= budget {
			break
		}
		estimate := float64(budget) / float64(max(elapsed, 1)) * float64(number)
		for float64(number) < estimate && number < 1_000_000 {
			number *= 10
		}
	}
	return number, nil
}

func loop(call func() error, number int) (time.Duration, error) {
	start := time.Now()
	for range number {
		if err := call(); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

// moduleVersion is the version of k8s.io/dynamic-resource-allocation built into this binary.
func moduleVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, dependency := range info.Deps {
		if dependency.Path == "k8s.io/dynamic-resource-allocation" {
			return dependency.Path + " " + dependency.Version
		}
	}
	return ""
}
