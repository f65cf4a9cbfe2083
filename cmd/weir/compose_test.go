package main

import (
	"os"
	"path"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/weirnet/weir/configs"
)

// TestComposeInventoryReloads: the compose lab's weirs read the inventory
// deploy/weir.yaml names through a mount of its directory, not of the file
// alone. A single-file bind mount holds the file's inode: an editor's save
// (a new file renamed over the old) never reached the containers, and
// weir went on with the inventory it started with.
func TestComposeInventoryReloads(t *testing.T) {
	cfg, err := configs.Load("../../deploy/weir.yaml")
	if err != nil {
		t.Fatal(err)
	}
	inv := cfg.Enrich.Inventory
	data, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Command []string `yaml:"command"`
			Volumes []string `yaml:"volumes"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(data, &compose); err != nil {
		t.Fatal(err)
	}
	weirs := 0
	for name, svc := range compose.Services {
		if len(svc.Command) == 0 || svc.Command[0] != "run" {
			continue // not a weir
		}
		weirs++
		mounted := false
		for _, v := range svc.Volumes {
			parts := strings.Split(v, ":")
			if len(parts) < 2 {
				continue
			}
			switch dst := parts[1]; {
			case dst == inv:
				t.Errorf("%s mounts the inventory file %s alone (%q): a save by rename does not reach the container", name, inv, v)
			case dst == path.Dir(inv):
				mounted = true
			}
		}
		if !mounted {
			t.Errorf("%s: no mount of %s, the directory of deploy/weir.yaml's inventory", name, path.Dir(inv))
		}
	}
	if weirs == 0 {
		t.Fatal("no weir service in docker-compose.yml")
	}
}
