// Command goyaml reads one YAML file with the two parsers TiUP has used for topologies, gopkg.in/yaml.v2 (up to
// TiUP v1.16.2) and gopkg.in/yaml.v3 (from v1.16.3; pingcap/tiup CHANGELOG, #2558), each into interface{} as TiUP
// reads server_configs, and prints what each read as JSON with every scalar's Go type:
//
//	{"v2": <node>, "v3": <node>}   a node: {"map": [[<key node>, <value node>], ...]}, {"seq": [...]},
//	                               {"str": "..."}, {"bool": true}, {"int": "42"}, {"float": "1.5"}, {"null": null},
//	                               {"time": "..."}, {"other": "<Go type>"}
//
// A parser's error is printed in place of its node: {"v2_error": "..."}. Used by the tests of the TiUP artefacts.
package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"reflect"
	"strconv"
	"time"

	yamlv2 "gopkg.in/yaml.v2"
	yamlv3 "gopkg.in/yaml.v3"
)

func node(v interface{}) interface{} {
	switch x := v.(type) {
	case nil:
		return map[string]interface{}{"null": nil}
	case string:
		return map[string]interface{}{"str": x}
	case bool:
		return map[string]interface{}{"bool": x}
	case int:
		return map[string]interface{}{"int": strconv.FormatInt(int64(x), 10)}
	case int64:
		return map[string]interface{}{"int": strconv.FormatInt(x, 10)}
	case uint64:
		return map[string]interface{}{"int": strconv.FormatUint(x, 10)}
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return map[string]interface{}{"float": fmt.Sprint(x)}
		}
		return map[string]interface{}{"float": strconv.FormatFloat(x, 'g', -1, 64)}
	case time.Time:
		return map[string]interface{}{"time": x.Format(time.RFC3339Nano)}
	case []interface{}:
		out := make([]interface{}, 0, len(x))
		for _, item := range x {
			out = append(out, node(item))
		}
		return map[string]interface{}{"seq": out}
	}
	value := reflect.ValueOf(v)
	if value.Kind() == reflect.Map {
		pairs := make([]interface{}, 0, value.Len())
		iter := value.MapRange()
		for iter.Next() {
			pairs = append(pairs, []interface{}{node(iter.Key().Interface()), node(iter.Value().Interface())})
		}
		return map[string]interface{}{"map": pairs}
	}
	return map[string]interface{}{"other": fmt.Sprintf("%T", v)}
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: goyaml FILE.yaml")
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out := map[string]interface{}{}
	var v2 interface{}
	if err := yamlv2.Unmarshal(data, &v2); err != nil {
		out["v2_error"] = err.Error()
	} else {
		out["v2"] = node(v2)
	}
	var v3 interface{}
	if err := yamlv3.Unmarshal(data, &v3); err != nil {
		out["v3_error"] = err.Error()
	} else {
		out["v3"] = node(v3)
	}
	encoded, err := json.Marshal(out)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(string(encoded))
}
