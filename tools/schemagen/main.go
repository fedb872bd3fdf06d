// Command schemagen writes the structure of the Kubernetes API types dratwin reads as compact JSON.
//
// It walks the Go types of the k8s.io/api module (the exact version in go.mod) by reflection, so the result
// is what the API server's JSON decoder accepts: every field with its JSON name and its Go type, reduced to
// the few kinds of value the decoder distinguishes. tools/gen_schema.py runs it and adds the Karpenter CRDs.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"

	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"
	kueueconfigv1beta1 "sigs.k8s.io/kueue/apis/config/v1beta1"
	kueueconfigv1beta2 "sigs.k8s.io/kueue/apis/config/v1beta2"
)

type kind struct {
	apiVersion string
	object     any
}

var kinds = []kind{
	{"v1", corev1.Pod{}},
	{"v1", corev1.Node{}},
	{"v1", corev1.Namespace{}},
	{"v1", corev1.ReplicationController{}},
	{"v1", corev1.PodTemplate{}},
	{"apps/v1", appsv1.Deployment{}},
	{"apps/v1", appsv1.ReplicaSet{}},
	{"apps/v1", appsv1.StatefulSet{}},
	{"apps/v1", appsv1.DaemonSet{}},
	{"batch/v1", batchv1.Job{}},
	{"batch/v1", batchv1.CronJob{}},
	{"resource.k8s.io/v1", resourcev1.DeviceClass{}},
	{"resource.k8s.io/v1", resourcev1.ResourceClaim{}},
	{"resource.k8s.io/v1", resourcev1.ResourceClaimTemplate{}},
	{"resource.k8s.io/v1", resourcev1.ResourceSlice{}},
	{"resource.k8s.io/v1beta2", resourcev1beta2.DeviceClass{}},
	{"resource.k8s.io/v1beta2", resourcev1beta2.ResourceClaim{}},
	{"resource.k8s.io/v1beta2", resourcev1beta2.ResourceClaimTemplate{}},
	{"resource.k8s.io/v1beta2", resourcev1beta2.ResourceSlice{}},
	{"resource.k8s.io/v1beta1", resourcev1beta1.DeviceClass{}},
	{"resource.k8s.io/v1beta1", resourcev1beta1.ResourceClaim{}},
	{"resource.k8s.io/v1beta1", resourcev1beta1.ResourceClaimTemplate{}},
	{"resource.k8s.io/v1beta1", resourcev1beta1.ResourceSlice{}},
	{"config.kueue.x-k8s.io/v1beta2", kueueconfigv1beta2.Configuration{}},
	{"config.kueue.x-k8s.io/v1beta1", kueueconfigv1beta1.Configuration{}},
}

// Types with their own JSON decoding: what each accepts.
var special = map[string]string{
	"k8s.io/apimachinery/pkg/api/resource.Quantity":   "quantity",
	"k8s.io/apimachinery/pkg/util/intstr.IntOrString": "intOrString",
	"k8s.io/apimachinery/pkg/apis/meta/v1.Time":       "time",
	"k8s.io/apimachinery/pkg/apis/meta/v1.MicroTime":  "time",
	"k8s.io/apimachinery/pkg/apis/meta/v1.Duration":   "duration",
	"k8s.io/apimachinery/pkg/apis/meta/v1.FieldsV1":   "any",
	"k8s.io/apimachinery/pkg/runtime.RawExtension":    "any",
}

var unmarshaler = reflect.TypeOf((*json.Unmarshaler)(nil)).Elem()

type schema struct {
	Types map[string]map[string]string `json:"types"`
	Kinds map[string]string            `json:"kinds"`
}

func main() {
	out := schema{Types: map[string]map[string]string{}, Kinds: map[string]string{}}
	for _, k := range kinds {
		t := reflect.TypeOf(k.object)
		out.Kinds[k.apiVersion+"/"+t.Name()] = ref(t, out.Types)
	}
	encoder := json.NewEncoder(os.Stdout)
	encoder.SetIndent("", " ")
	if err := encoder.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func typeName(t reflect.Type) string {
	path := t.PkgPath()
	path = strings.TrimPrefix(path, "k8s.io/api/")
	path = strings.TrimPrefix(path, "k8s.io/apimachinery/pkg/apis/")
	path = strings.Replace(path, "sigs.k8s.io/kueue/apis/config/", "kueue-config/", 1)
	return path + "." + t.Name()
}

func ref(t reflect.Type, types map[string]map[string]string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if name, ok := special[t.PkgPath()+"."+t.Name()]; ok {
		return name
	}
	if t.Implements(unmarshaler) || reflect.PointerTo(t).Implements(unmarshaler) {
		panic("unmodelled JSON decoding: " + t.PkgPath() + "." + t.Name())
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Int32:
		return "int32"
	case reflect.Int64, reflect.Int:
		return "int64"
	case reflect.Float64, reflect.Float32: // float32: Kueue's clientConnection.qps; any JSON number decodes
		return "float64"
	case reflect.Interface:
		return "any"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "bytes"
		}
		return "[]" + ref(t.Elem(), types)
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			panic("map key is not a string: " + t.String())
		}
		return "map[]" + ref(t.Elem(), types)
	case reflect.Struct:
		name := typeName(t)
		if _, seen := types[name]; !seen {
			fields := map[string]string{}
			types[name] = fields
			addFields(t, fields, types)
		}
		return name
	}
	panic("unhandled type " + t.String())
}

func addFields(t reflect.Type, fields map[string]string, types map[string]map[string]string) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && name == "" {
			inner := f.Type
			for inner.Kind() == reflect.Pointer {
				inner = inner.Elem()
			}
			addFields(inner, fields, types)
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields[name] = ref(f.Type, types)
	}
}
