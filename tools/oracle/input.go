package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
)

// caseInput is one case of the conformance format; only the fields the allocator needs.
type caseInput struct {
	Name     string            `json:"name"`
	Features []string          `json:"features"`
	Node     string            `json:"node"`
	Objects  []json.RawMessage `json:"objects"`
	Allocate []string          `json:"allocate"`

	// readErr is set when the case could not be read; the answer then reports it.
	readErr error
}

// caseObjects are a case's objects decoded into the Kubernetes Go types, in input order.
type caseObjects struct {
	nodes   map[string]*v1.Node
	classes map[string]*resourceapi.DeviceClass
	slices  []*resourceapi.ResourceSlice
	claims  []*resourceapi.ResourceClaim
}

func readJSONLines(path string, cases chan<- caseInput) error {
	var source io.Reader = os.Stdin
	if path != "-" {
		file, err := os.Open(path)
		if err != nil {
			return err
		}
		defer file.Close()
		source = file
	}
	scanner := bufio.NewScanner(source)
	scanner.Buffer(make([]byte, 0, 1<<20), 1<<30)
	line := 0
	for scanner.Scan() {
		line++
		text := strings.TrimSpace(scanner.Text())
		if text == "" {
			continue
		}
		var input caseInput
		if err := json.Unmarshal([]byte(text), &input); err != nil {
			input = caseInput{Name: fmt.Sprintf("%s:%d", path, line), readErr: err}
		}
		cases <- input
	}
	return scanner.Err()
}

func readCaseFiles(paths []string, cases chan<- caseInput) error {
	for _, path := range paths {
		files, err := caseFiles(path)
		if err != nil {
			return err
		}
		for _, file := range files {
			cases <- readCaseFile(file)
		}
	}
	return nil
}

// caseFiles is the path itself, or the .yaml files of a folder in name order.
func caseFiles(path string) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	files, err := filepath.Glob(filepath.Join(path, "*.yaml"))
	sort.Strings(files)
	return files, err
}

func readCaseFile(path string) caseInput {
	text, err := os.ReadFile(path)
	var document any
	if err == nil {
		// YAML 1.2 scalars (only true/false are booleans), as the project's Python loader reads
		// them: an unquoted Y or n stays a string.
		err = yaml.Unmarshal(text, &document)
	}
	if err == nil {
		text, err = json.Marshal(document)
	}
	var input caseInput
	if err == nil {
		err = json.Unmarshal(text, &input)
	}
	if err != nil {
		return caseInput{Name: path, readErr: fmt.Errorf("%s: %w", path, err)}
	}
	if input.Name == "" {
		input.Name = path
	}
	return input
}

func decodeObjects(raws []json.RawMessage) (caseObjects, error) {
	objects := caseObjects{nodes: map[string]*v1.Node{}, classes: map[string]*resourceapi.DeviceClass{}}
	for index, raw := range raws {
		var head struct {
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			return objects, fmt.Errorf("objects[%d]: %w", index, err)
		}
		if err := objects.add(head.Kind, raw); err != nil {
			return objects, fmt.Errorf("objects[%d] (%s): %w", index, head.Kind, err)
		}
	}
	return objects, nil
}

func (o *caseObjects) add(kind string, raw json.RawMessage) error {
	switch kind {
	case "Node":
		node := &v1.Node{}
		if err := json.Unmarshal(raw, node); err != nil {
			return err
		}
		o.nodes[node.Name] = node
	case "DeviceClass":
		class := &resourceapi.DeviceClass{}
		if err := json.Unmarshal(raw, class); err != nil {
			return err
		}
		o.classes[class.Name] = class
	case "ResourceSlice":
		slice := &resourceapi.ResourceSlice{}
		if err := json.Unmarshal(raw, slice); err != nil {
			return err
		}
		o.slices = append(o.slices, slice)
	case "ResourceClaim":
		claim := &resourceapi.ResourceClaim{}
		if err := json.Unmarshal(raw, claim); err != nil {
			return err
		}
		if claim.Namespace == "" {
			claim.Namespace = "default"
		}
		o.claims = append(o.claims, claim)
	default:
		return fmt.Errorf("kind %q is not an allocator input (Node, DeviceClass, ResourceSlice, ResourceClaim)", kind)
	}
	return nil
}

// claimsToAllocate finds the named claims (namespace/name, or name in namespace default); with
// no names, every claim without status.allocation, in input order, as `dratwin allocate` does.
func (o *caseObjects) claimsToAllocate(names []string) ([]*resourceapi.ResourceClaim, []string, error) {
	byKey := map[string]*resourceapi.ResourceClaim{}
	for _, claim := range o.claims {
		byKey[claim.Namespace+"/"+claim.Name] = claim
	}
	if len(names) == 0 {
		for _, claim := range o.claims {
			if claim.Status.Allocation == nil {
				names = append(names, claim.Namespace+"/"+claim.Name)
			}
		}
	}
	claims := make([]*resourceapi.ResourceClaim, 0, len(names))
	keys := make([]string, 0, len(names))
	for _, name := range names {
		key := name
		if !strings.Contains(key, "/") {
			key = "default/" + name
		}
		claim, found := byKey[key]
		if !found {
			return nil, nil, fmt.Errorf("claim %s is not in the case's objects", key)
		}
		claims = append(claims, claim)
		keys = append(keys, key)
	}
	return claims, keys, nil
}
