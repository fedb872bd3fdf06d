package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/utils/ptr"
)

// variants are upstream's allocator implementations, most stable first (NewAllocator's order).
var variants = []string{"stable", "incubating", "experimental"}

type runOptions struct {
	timeout    time.Duration
	stableRuns int
}

// answer is one allocator's answer, in the JSON shape of `dratwin allocate -o json`.
type answer struct {
	Result         string                                  `json:"result"`
	Allocations    map[string]resourceapi.AllocationResult `json:"allocations,omitempty"`
	Error          string                                  `json:"error,omitempty"`
	Steps          int64                                   `json:"steps"`
	Seconds        float64                                 `json:"seconds"`
	OrderDependent bool                                    `json:"orderDependent,omitempty"`
	Alternatives   []answer                                `json:"alternatives,omitempty"`
	Runs           int                                     `json:"runs,omitempty"`
}

type caseAnswer struct {
	Name    string            `json:"name"`
	Variant string            `json:"variant,omitempty"`
	Answers map[string]answer `json:"answers,omitempty"`
	Error   string            `json:"error,omitempty"`
}

// featureFields maps the case format's feature names to the allocator's Features fields.
var featureFields = map[string]func(*structured.Features){
	"adminAccess":             func(f *structured.Features) { f.AdminAccess = true },
	"prioritizedList":         func(f *structured.Features) { f.PrioritizedList = true },
	"partitionableDevices":    func(f *structured.Features) { f.PartitionableDevices = true },
	"deviceTaints":            func(f *structured.Features) { f.DeviceTaints = true },
	"deviceBindingConditions": func(f *structured.Features) { f.DeviceBindingAndStatus = true },
	"consumableCapacity":      func(f *structured.Features) { f.ConsumableCapacity = true },
	"listTypeAttributes":      func(f *structured.Features) { f.ListTypeAttributes = true },
	// Not an allocator feature (kube-scheduler's extended-resource path): no effect here.
	"extendedResources": func(*structured.Features) {},
}

func parseFeatures(names []string) (structured.Features, error) {
	var features structured.Features
	for _, name := range names {
		set, known := featureFields[name]
		if !known {
			return features, fmt.Errorf("unknown feature %q", name)
		}
		set(&features)
	}
	return features, nil
}

// selectMutex guards structured.EnableAllocators, a process-wide setting that NewAllocator reads.
// Only construction reads it, so Allocate calls still run in parallel.
var selectMutex sync.Mutex

// newAllocator builds one variant ("" = NewAllocator's own choice) and says which one it is.
func newAllocator(variant string, features structured.Features, state structured.AllocatedState,
	classes classLister, slices []*resourceapi.ResourceSlice) (structured.Allocator, string, error) {
	selectMutex.Lock()
	defer selectMutex.Unlock()
	if variant == "" {
		structured.EnableAllocators()
	} else {
		structured.EnableAllocators(variant)
	}
	defer structured.EnableAllocators()
	allocator, err := structured.NewAllocator(context.Background(), features, state, classes, slices, celCache(features))
	if err != nil {
		return nil, "", err
	}
	return allocator, variantOf(allocator), nil
}

// variantOf names the implementing package: *stable.Allocator -> "stable".
func variantOf(allocator structured.Allocator) string {
	name := reflect.TypeOf(allocator).String()
	name = strings.TrimPrefix(name, "*")
	name, _, _ = strings.Cut(name, ".")
	return name
}

var (
	celCaches     = map[cel.Features]*cel.Cache{}
	celCacheMutex sync.Mutex
)

// celCache is one cache per CEL environment, shared by all cases, as kube-scheduler keeps one.
func celCache(features structured.Features) *cel.Cache {
	key := cel.Features{
		EnableConsumableCapacity: features.ConsumableCapacity,
		EnableListTypeAttributes: features.ListTypeAttributes,
	}
	celCacheMutex.Lock()
	defer celCacheMutex.Unlock()
	cache, found := celCaches[key]
	if !found {
		cache = cel.NewCache(1000, key)
		celCaches[key] = cache
	}
	return cache
}

// classLister serves a case's DeviceClasses; a missing one is NotFound, as from the informer.
type classLister map[string]*resourceapi.DeviceClass

func (l classLister) List() ([]*resourceapi.DeviceClass, error) {
	classes := make([]*resourceapi.DeviceClass, 0, len(l))
	for _, class := range l {
		classes = append(classes, class)
	}
	return classes, nil
}

func (l classLister) Get(name string) (*resourceapi.DeviceClass, error) {
	class, found := l[name]
	if !found {
		return nil, apierrors.NewNotFound(resourceapi.Resource("deviceclasses"), name)
	}
	return class, nil
}

// allocatedState is what kube-scheduler derives from the claims that have status.allocation:
// admin-access results are not in use; with consumable capacity, results with a shareID are
// shared allocations whose consumed capacity adds up; every other result is exclusively in use.
func allocatedState(claims []*resourceapi.ResourceClaim, features structured.Features) structured.AllocatedState {
	state := structured.AllocatedState{
		AllocatedDevices:         sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](),
		AggregatedCapacity:       structured.NewConsumedCapacityCollection(),
	}
	for _, claim := range claims {
		if claim.Status.Allocation == nil {
			continue
		}
		for _, result := range claim.Status.Allocation.Devices.Results {
			if ptr.Deref(result.AdminAccess, false) {
				continue
			}
			device := structured.MakeDeviceID(result.Driver, result.Pool, result.Device)
			if features.ConsumableCapacity && result.ShareID != nil {
				state.AllocatedSharedDeviceIDs.Insert(structured.MakeSharedDeviceID(device, result.ShareID))
				if result.ConsumedCapacity != nil {
					state.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(device, result.ConsumedCapacity))
				}
				continue
			}
			state.AllocatedDevices.Insert(device)
		}
	}
	return state
}

// prepared is everything a case's Allocate calls need.
type prepared struct {
	features structured.Features
	state    structured.AllocatedState
	classes  classLister
	slices   []*resourceapi.ResourceSlice
	node     *v1.Node
	claims   []*resourceapi.ResourceClaim
	keys     []string
}

func prepare(input caseInput) (*prepared, error) {
	if input.readErr != nil {
		return nil, input.readErr
	}
	features, err := parseFeatures(input.Features)
	if err != nil {
		return nil, err
	}
	objects, err := decodeObjects(input.Objects)
	if err != nil {
		return nil, err
	}
	node, found := objects.nodes[input.Node]
	if !found {
		return nil, fmt.Errorf("node %q is not in the case's objects", input.Node)
	}
	claims, keys, err := objects.claimsToAllocate(input.Allocate)
	if err != nil {
		return nil, err
	}
	return &prepared{
		features: features,
		state:    allocatedState(objects.claims, features),
		classes:  classLister(objects.classes),
		slices:   objects.slices,
		node:     node,
		claims:   claims,
		keys:     keys,
	}, nil
}

func answerCase(input caseInput, options runOptions) caseAnswer {
	result := caseAnswer{Name: input.Name}
	p, err := prepare(input)
	if err != nil {
		result.Error = err.Error()
		return result
	}
	_, picked, err := newAllocator("", p.features, p.state, p.classes, p.slices)
	if err != nil {
		result.Error = err.Error()
		return result
	}
	result.Variant = picked
	result.Answers = map[string]answer{}
	for _, variant := range variants {
		runs := 1
		if variant == "stable" {
			runs = max(options.stableRuns, 1)
		}
		if got, supported := answerVariant(p, variant, runs, options.timeout); supported {
			result.Answers[variant] = got
		}
	}
	return result
}

// answerVariant runs one variant; false when it does not support the case's features. With
// runs > 1 the pools are presented in a different order each time (see poolOrders) and every
// distinct answer is kept.
func answerVariant(p *prepared, variant string, runs int, timeout time.Duration) (answer, bool) {
	var first answer
	var distinct []answer
	seen := map[string]bool{}
	started := time.Now()
	for run, slices := range poolOrders(p.slices, runs) {
		allocator, _, err := newAllocator(variant, p.features, p.state, p.classes, slices)
		if err != nil {
			if strings.Contains(err.Error(), "no allocator available") {
				return answer{}, false
			}
			return answer{Result: "error", Error: err.Error()}, true
		}
		got := allocateOnce(allocator, p, timeout)
		if run == 0 {
			first = got
		}
		first.Runs = run + 1
		if key := got.identity(); !seen[key] {
			seen[key] = true
			distinct = append(distinct, got)
		}
		if got.Result == "timeout" {
			break // a search that long is not repeated
		}
		if time.Since(started) > timeout {
			break // the repeats of one case together take at most about one call's bound
		}
	}
	if len(distinct) > 1 {
		first.OrderDependent = true
		first.Alternatives = distinct
	}
	return first, true
}

func allocateOnce(allocator structured.Allocator, p *prepared, timeout time.Duration) answer {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	results, err := allocator.Allocate(ctx, p.node, p.claims)
	got := answer{Seconds: time.Since(start).Seconds(), Steps: steps(allocator)}
	switch {
	case err != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)):
		got.Result = "timeout"
		got.Error = err.Error()
	case err != nil:
		got.Result = "error"
		got.Error = err.Error()
	case results == nil && len(p.claims) > 0:
		got.Result = "unsatisfiable"
	default:
		got.Result = "allocated"
		got.Allocations = map[string]resourceapi.AllocationResult{}
		for index, key := range p.keys {
			got.Allocations[key] = results[index]
		}
	}
	return got
}

// steps reads the allocator's count of search steps (its GetStats method), 0 when it has none.
func steps(allocator structured.Allocator) int64 {
	method := reflect.ValueOf(allocator).MethodByName("GetStats")
	if !method.IsValid() || method.Type().NumIn() != 0 || method.Type().NumOut() != 1 {
		return 0
	}
	stats := method.Call(nil)[0]
	if stats.Kind() != reflect.Struct {
		return 0
	}
	field := stats.FieldByName("NumAllocateOneInvocations")
	if !field.IsValid() || !field.CanInt() {
		return 0
	}
	return field.Int()
}

// identity is the answer without what differs between equal answers (timings, generated share
// IDs), for telling distinct answers apart.
func (a answer) identity() string {
	plain := answer{Result: a.Result, Error: a.Error, Allocations: map[string]resourceapi.AllocationResult{}}
	for key, allocation := range a.Allocations {
		copied := *allocation.DeepCopy()
		for index := range copied.Devices.Results {
			if copied.Devices.Results[index].ShareID != nil {
				copied.Devices.Results[index].ShareID = ptr.To(types.UID("generated"))
			}
		}
		plain.Allocations[key] = copied
	}
	text, _ := json.Marshal(plain)
	return string(text)
}
