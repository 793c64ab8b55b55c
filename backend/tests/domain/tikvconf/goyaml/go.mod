module headroom.test/goyaml

go 1.19

require (
	gopkg.in/yaml.v2 v2.4.0
	gopkg.in/yaml.v3 v3.0.1
)
