"""The UltraServers of the catalog agree with the instance types they are made of."""

from __future__ import annotations

import pytest

from dratwin.catalog import UnknownUltraServerError, load_catalog, ultraserver, ultraservers, ultraservers_of


@pytest.mark.parametrize(("name", "instances", "gpus"), [("u-p6e-gb200x72", 18, 72), ("u-p6e-gb200x36", 9, 36)])
def test_an_ultraserver_is_whole_instances_of_one_type(name: str, instances: int, gpus: int) -> None:
    server = ultraserver(name)
    it = load_catalog().get(server.instance_type)
    assert it.gpus is not None
    assert (server.instances, server.accelerators) == (instances, gpus)
    assert server.instances * it.gpus.count == server.accelerators
    assert server.instances_per_domain == instances  # one NVLink domain per UltraServer
    assert server.capacity_block_price_usd_per_hour is not None
    assert round(server.capacity_block_price_usd_per_hour / server.accelerators, 3) == 10.582  # per GPU, [CB-PR]
    assert "capacity_block_price_usd_per_hour" in server.unverified


def test_sizes_of_an_instance_type_largest_first() -> None:
    assert [u.name for u in ultraservers_of("p6e-gb200.36xlarge")] == ["u-p6e-gb200x72", "u-p6e-gb200x36"]
    assert ultraservers_of("p5.48xlarge") == []
    assert all(u.instance_type in load_catalog() for u in ultraservers().values())


def test_unknown_ultraserver() -> None:
    with pytest.raises(UnknownUltraServerError, match="u-p6e-gb200x72"):
        ultraserver("u-p6e-gb200x18")
