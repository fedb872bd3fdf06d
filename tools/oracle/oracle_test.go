package main

import (
	"encoding/json"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/utils/ptr"
)

func slice(name, driver, pool string) *resourceapi.ResourceSlice {
	s := &resourceapi.ResourceSlice{}
	s.Name = name
	s.Spec.Driver = driver
	s.Spec.Pool.Name = pool
	return s
}

func names(slices []*resourceapi.ResourceSlice) string {
	text := ""
	for _, s := range slices {
		text += s.Name + " "
	}
	return text
}

func TestPoolOrders(t *testing.T) {
	input := []*resourceapi.ResourceSlice{
		slice("a1", "d", "a"), slice("b1", "d", "b"), slice("a2", "d", "a"), slice("c1", "e", "a"),
	}
	cases := []struct {
		name   string
		slices []*resourceapi.ResourceSlice
		runs   int
		want   []string
	}{
		{"one run is the input", input, 1, []string{"a1 b1 a2 c1 "}},
		{"one pool has one order", input[:1], 5, []string{"a1 "}},
		{"rotations then the reverse, pools kept whole", input, 4,
			[]string{"a1 b1 a2 c1 ", "b1 c1 a1 a2 ", "c1 a1 a2 b1 ", "c1 b1 a1 a2 "}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			orders := poolOrders(tc.slices, tc.runs)
			if len(orders) != len(tc.want) {
				t.Fatalf("got %d orders, want %d", len(orders), len(tc.want))
			}
			for index, order := range orders {
				if got := names(order); got != tc.want[index] {
					t.Errorf("order %d: got %q, want %q", index, got, tc.want[index])
				}
			}
		})
	}
}

func allocated(results ...resourceapi.DeviceRequestAllocationResult) *resourceapi.ResourceClaim {
	claim := &resourceapi.ResourceClaim{}
	claim.Status.Allocation = &resourceapi.AllocationResult{}
	claim.Status.Allocation.Devices.Results = results
	return claim
}

func TestAllocatedState(t *testing.T) {
	plain := resourceapi.DeviceRequestAllocationResult{Driver: "d", Pool: "p", Device: "plain"}
	admin := resourceapi.DeviceRequestAllocationResult{Driver: "d", Pool: "p", Device: "admin", AdminAccess: ptr.To(true)}
	shared := resourceapi.DeviceRequestAllocationResult{Driver: "d", Pool: "p", Device: "shared",
		ShareID:          ptr.To(types.UID("u1")),
		ConsumedCapacity: map[resourceapi.QualifiedName]resource.Quantity{"memory": resource.MustParse("1Gi")}}
	claims := []*resourceapi.ResourceClaim{allocated(plain, admin, shared), {}}
	cases := []struct {
		name       string
		consumable bool
		exclusive  []string
		shares     int
		capacity   string
	}{
		{"admin access is not in use; a share is exclusive without consumable capacity", false,
			[]string{"plain", "shared"}, 0, ""},
		{"with consumable capacity a share adds its consumed capacity", true, []string{"plain"}, 1, "1Gi"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			state := allocatedState(claims, structured.Features{ConsumableCapacity: tc.consumable})
			if state.AllocatedDevices.Len() != len(tc.exclusive) {
				t.Errorf("exclusive devices: got %v, want %v", state.AllocatedDevices.UnsortedList(), tc.exclusive)
			}
			for _, device := range tc.exclusive {
				if !state.AllocatedDevices.Has(structured.MakeDeviceID("d", "p", device)) {
					t.Errorf("%s should be in use", device)
				}
			}
			if state.AllocatedSharedDeviceIDs.Len() != tc.shares {
				t.Errorf("shares: got %d, want %d", state.AllocatedSharedDeviceIDs.Len(), tc.shares)
			}
			consumed := state.AggregatedCapacity[structured.MakeDeviceID("d", "p", "shared")]
			got := ""
			if consumed != nil {
				got = consumed["memory"].String()
			}
			if got != tc.capacity {
				t.Errorf("consumed capacity: got %q, want %q", got, tc.capacity)
			}
		})
	}
}

func TestAnswerOfACase(t *testing.T) {
	objects := []string{
		`{"kind": "Node", "metadata": {"name": "n"}}`,
		`{"kind": "DeviceClass", "metadata": {"name": "c"}}`,
		`{"kind": "ResourceSlice", "metadata": {"name": "s"}, "spec": {"driver": "d", "nodeName": "n",
		  "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}, "devices": [{"name": "x"}]}}`,
		`{"kind": "ResourceClaim", "metadata": {"name": "one"}, "spec": {"devices": {"requests": [
		  {"name": "r", "exactly": {"deviceClassName": "c", "allocationMode": "ExactCount", "count": 1}}]}}}`,
		`{"kind": "ResourceClaim", "metadata": {"name": "two"}, "spec": {"devices": {"requests": [
		  {"name": "r", "exactly": {"deviceClassName": "c", "allocationMode": "ExactCount", "count": 1}}]}}}`,
	}
	input := caseInput{Name: "t", Node: "n"}
	for _, text := range objects {
		input.Objects = append(input.Objects, json.RawMessage(text))
	}
	cases := []struct {
		name     string
		allocate []string
		features []string
		result   string
		variant  string
	}{
		{"one claim gets the device", []string{"one"}, nil, "allocated", "stable"},
		{"two claims do not fit one device", []string{"one", "two"}, nil, "unsatisfiable", "stable"},
		{"no names: every unallocated claim", nil, []string{"consumableCapacity"}, "unsatisfiable", "incubating"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			input.Allocate, input.Features = tc.allocate, tc.features
			got := answerCase(input, runOptions{timeout: 10e9, stableRuns: 2})
			if got.Error != "" || got.Variant != tc.variant || got.Answers[tc.variant].Result != tc.result {
				t.Errorf("got %+v, want %s from %s", got, tc.result, tc.variant)
			}
		})
	}
}
