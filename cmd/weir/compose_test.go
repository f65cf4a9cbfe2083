package main

import (
	"os"
	"path"
	"strings"
	"testing"
	"time"

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
			Command   []string `yaml:"command"`
			Volumes   []string `yaml:"volumes"`
			StopGrace string   `yaml:"stop_grace_period"`
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
		// A stop on a cluster that stopped answering takes up to about
		// 12 s (README); Docker's default kills at 10 s.
		if d, err := time.ParseDuration(svc.StopGrace); err != nil || d < 20*time.Second {
			t.Errorf("%s: stop_grace_period %q: want at least 20s, as a stop on a hung cluster takes up to about 12 s", name, svc.StopGrace)
		}
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
