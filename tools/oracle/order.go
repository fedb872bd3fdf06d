package main

import (
	"math/rand/v2"

	resourceapi "k8s.io/api/resource/v1"
)

// poolOrders gives up to runs orders of the slices that differ only in the order in which pools
// first appear: the input order first, then each pool first in turn, the reverse, and shuffles.
// The slices of one pool keep their relative order, so for the allocator the orders differ only
// where it visits pools in an order of its own (stable: Go map order, which is random anyway).
// With a single pool there is only one order.
func poolOrders(slices []*resourceapi.ResourceSlice, runs int) [][]*resourceapi.ResourceSlice {
	groups := groupByPool(slices)
	if len(groups) <= 1 || runs <= 1 {
		return [][]*resourceapi.ResourceSlice{slices}
	}
	orders := [][]*resourceapi.ResourceSlice{slices}
	count := len(groups)
	permutations := [][]int{}
	for shift := 1; shift < count; shift++ {
		permutation := make([]int, count)
		for index := range permutation {
			permutation[index] = (index + shift) % count
		}
		permutations = append(permutations, permutation)
	}
	reversed := make([]int, count)
	for index := range reversed {
		reversed[index] = count - 1 - index
	}
	permutations = append(permutations, reversed)
	random := rand.New(rand.NewPCG(uint64(len(slices)), uint64(count)))
	for len(permutations) < runs-1 {
		permutations = append(permutations, random.Perm(count))
	}
	for _, permutation := range permutations[:runs-1] {
		var order []*resourceapi.ResourceSlice
		for _, group := range permutation {
			order = append(order, groups[group]...)
		}
		orders = append(orders, order)
	}
	return orders
}

func groupByPool(slices []*resourceapi.ResourceSlice) [][]*resourceapi.ResourceSlice {
	type poolKey struct{ driver, pool string }
	index := map[poolKey]int{}
	var groups [][]*resourceapi.ResourceSlice
	for _, slice := range slices {
		key := poolKey{slice.Spec.Driver, slice.Spec.Pool.Name}
		at, found := index[key]
		if !found {
			at = len(groups)
			index[key] = at
			groups = append(groups, nil)
		}
		groups[at] = append(groups[at], slice)
	}
	return groups
}
