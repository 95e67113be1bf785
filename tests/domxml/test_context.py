"""The launcher facts a VMI does not carry (domxml/context.py): defaults, pod cpuset, host NUMA cells, env, EFI."""
from __future__ import annotations

from instancetype_webhook.domxml.context import LauncherContext, NumaCell, SMBios, context_from_converter


def test_defaults_are_the_oracles_context():
    ctx = LauncherContext()
    assert ctx.architecture is None and ctx.hypervisor_device_available and ctx.allow_emulation
    assert ctx.smbios == SMBios(manufacturer="KubeVirt", family="KubeVirt", product="None", sku="", version="")
    assert ctx.mem_balloon_stats_period == 10 and ctx.free_page_reporting and ctx.serial_console_log
    assert ctx.container_disk_format == "qcow2" and ctx.block_pvcs == frozenset() and dict(ctx.env) == {}


def test_pod_cpuset_is_the_given_one_else_derived_from_the_vmi():
    assert LauncherContext(cpuset=(4, 5)).pod_cpuset(vcpus=8, dedicated=True, emulator_threads=1) == (4, 5)
    ctx = LauncherContext()
    assert ctx.pod_cpuset(vcpus=3, dedicated=True, emulator_threads=1) == (0, 1, 2, 3)
    assert ctx.pod_cpuset(vcpus=3, dedicated=True, emulator_threads=0) == (0, 1, 2)
    assert ctx.pod_cpuset(vcpus=3, dedicated=False, emulator_threads=1) == tuple(range(16))  # shared: the pool size
    assert LauncherContext(shared_cpuset_size=2).pod_cpuset(vcpus=8, dedicated=False, emulator_threads=0) == (0, 1)


def test_host_numa_cells_are_the_given_ones_else_one_cell_with_the_cpuset():
    (cell,) = LauncherContext().host_numa_cells((0, 1, 2))
    assert cell == NumaCell(id=0, cpus=(0, 1, 2))
    assert cell.memory_bytes == 64 * 2**30 and cell.page_sizes == (4096, 2 * 2**20, 2**30)
    cells = (NumaCell(id=0, cpus=(0,)), NumaCell(id=1, cpus=(1,), distances={0: 20}))
    assert LauncherContext(numa_cells=cells).host_numa_cells((0, 1, 2)) is cells


def test_with_env_merges_without_touching_the_original():
    base = LauncherContext(env={"A": "1", "B": "2"})
    assert base.with_env(None) is base and base.with_env({}) is base
    merged = base.with_env({"B": "3", "C": "4"})
    assert dict(merged.env) == {"A": "1", "B": "3", "C": "4"}
    assert dict(base.env) == {"A": "1", "B": "2"}
    assert merged.architecture == base.architecture and merged.smbios == base.smbios


def test_efi_environment_follows_the_ovmf_directory_and_files_of_the_architecture():
    amd = LauncherContext().efi_environment("amd64")
    assert amd.files(True) == ("/usr/share/edk2/ovmf/OVMF_CODE.secboot.fd", "/usr/share/edk2/ovmf/OVMF_VARS.secboot.fd")
    assert amd.files(False) == ("/usr/share/edk2/ovmf/OVMF_CODE.secboot.fd", "/usr/share/edk2/ovmf/OVMF_VARS.fd")
    moved = LauncherContext(ovmf_dirs={"amd64": "/fw/"}).efi_environment("amd64")
    assert moved.files(False) == ("/fw/OVMF_CODE.secboot.fd", "/fw/OVMF_VARS.fd")
    arm = LauncherContext().efi_environment("arm64")
    assert arm.files(False) == ("/usr/share/AAVMF/AAVMF_CODE.fd", "/usr/share/AAVMF/AAVMF_VARS.fd")
    assert arm.files(True) is None  # the arm64 image has no secure-boot builds
    assert LauncherContext().efi_environment("s390x").files(False) is None
    assert LauncherContext(firmware_files={}).efi_environment("amd64").files(False) is None


def test_context_from_converter_reads_only_env():
    assert dict(context_from_converter(None).env) == {}
    assert dict(context_from_converter({"env": None}).env) == {}
    ctx = context_from_converter({"env": {"PCI_RESOURCE_X": "0000:00:01.0"}, "architecture": "arm64"})
    assert dict(ctx.env) == {"PCI_RESOURCE_X": "0000:00:01.0"} and ctx.architecture is None
