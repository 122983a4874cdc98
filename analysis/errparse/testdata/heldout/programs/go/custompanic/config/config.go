package config

import "fmt"

type Config struct{ Port int }

func MustLoad(env map[string]string) Config {
	p, ok := env["PORT"]
	if !ok {
		panic(fmt.Sprintf("config: PORT is not set (%d variables)", len(env)))
	}
	var c Config
	fmt.Sscan(p, &c.Port)
	return c
}
