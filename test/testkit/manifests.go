package testkit

import (
	"errors"
	"io"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// DecodeManifests decodes every document of r, YAML or JSON, as kubectl apply -f reads a
// file, and returns the non-empty ones in order. Its error is the first document that does
// not decode.
func DecodeManifests(r io.Reader) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	decoder := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	for {
		obj := &unstructured.Unstructured{}
		err := decoder.Decode(&obj.Object)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if len(obj.Object) > 0 {
			out = append(out, obj)
		}
	}
}
