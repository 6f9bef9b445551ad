"""Windows display adapters from DXGI, so PDH's bare LUIDs get names, PCI ids and VRAM totals.

PDH names a GPU only by its adapter LUID (``luid_0x00000000_0x0000C3B4_phys_0``). DXGI's
``IDXGIAdapter1::GetDesc1`` gives, for the same LUID, the adapter's description, PCI vendor
and device id, dedicated VRAM and flags (remote, software). This module has two parts:

- :class:`DxgiAdapter` and the :class:`AdapterLister` seam: a function that returns every
  adapter. Tests pass a fake one; the logic that uses the adapters (pdh_source,
  source_factory) runs on Linux.
- :func:`list_adapters`: the real, thin ctypes implementation (Windows only, untested here):
  ``CreateDXGIFactory1(IID_IDXGIFactory1)``, ``IDXGIFactory1::EnumAdapters1`` until
  ``DXGI_ERROR_NOT_FOUND``, ``IDXGIAdapter1::GetDesc1``, and ``Release`` on every
  interface. ctypes is imported only when it runs.

Facts (checked against Microsoft's documentation and real code):

- DXGI_ADAPTER_DESC1 is ``WCHAR Description[128]; UINT VendorId, DeviceId, SubSysId,
  Revision; SIZE_T DedicatedVideoMemory, DedicatedSystemMemory, SharedSystemMemory; LUID
  AdapterLuid; UINT Flags`` (https://learn.microsoft.com/en-us/windows/win32/api/dxgi/ns-dxgi-dxgi_adapter_desc1);
  LUID is ``DWORD LowPart; LONG HighPart`` (signed) (https://learn.microsoft.com/en-us/windows/win32/api/winnt/ns-winnt-luid).
- vtable slots: IUnknown 0-2 (Release = 2), IDXGIObject 3-6, IDXGIFactory 7-11,
  ``IDXGIFactory1::EnumAdapters1`` = 12; IDXGIAdapter 7-9, ``IDXGIAdapter1::GetDesc1`` = 10
  (the inheritance in dxgi.h; the same slots in ynkdir/py-win32more
  Windows/Win32/Graphics/Dxgi/__init__.py, ``@commethod(12)`` and ``@commethod(10)``).
- IID_IDXGIFactory1 = {770aae78-f26f-4dba-a829-253c83d1b387}
  (https://learn.microsoft.com/en-us/windows/win32/api/dxgi/nn-dxgi-idxgifactory1).
- ``DXGI_ERROR_NOT_FOUND`` (0x887A0002) ends the enumeration
  (https://learn.microsoft.com/en-us/windows/win32/api/dxgi/nf-dxgi-idxgifactory1-enumadapters1).
- DXGI_ADAPTER_FLAG_REMOTE = 1, DXGI_ADAPTER_FLAG_SOFTWARE = 2
  (https://learn.microsoft.com/en-us/windows/win32/api/dxgi/ne-dxgi-dxgi_adapter_flag).
- "Microsoft Basic Render Driver" is always present from Windows 8 on, VendorId 0x1414,
  DeviceId 0x8c, with the software flag
  (https://learn.microsoft.com/en-us/windows/win32/api/dxgi/nf-dxgi-idxgifactory-enumadapters).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

AMD_VENDOR = 0x1002
MICROSOFT_VENDOR = 0x1414  # Basic Render Driver, and Microsoft's virtual adapters
FLAG_REMOTE = 0x1
FLAG_SOFTWARE = 0x2
DXGI_ERROR_NOT_FOUND = 0x887A0002
IID_IDXGIFACTORY1 = "{770aae78-f26f-4dba-a829-253c83d1b387}"
# vtable slots (see the module docstring)
_RELEASE = 2
_ENUM_ADAPTERS1 = 12
_GET_DESC1 = 10
_MAX_ADAPTERS = 64  # a guard against a driver that never says DXGI_ERROR_NOT_FOUND


@dataclass(frozen=True)
class DxgiAdapter:
    """One adapter as ``GetDesc1`` describes it. ``luid_high`` is the signed LONG
    HighPart, ``luid_low`` the DWORD LowPart."""

    luid_high: int
    luid_low: int
    description: str
    vendor_id: int
    device_id: int
    dedicated_video_memory: int
    flags: int = 0

    @property
    def luid(self) -> tuple[int, int]:
        """(HighPart, LowPart) as unsigned 32-bit numbers, as PDH prints them."""
        return (self.luid_high & 0xFFFFFFFF, self.luid_low & 0xFFFFFFFF)

    @property
    def pci_id(self) -> str:
        """ "1002:744c": the spelling used across the package."""
        return f"{self.vendor_id & 0xFFFF:04x}:{self.device_id & 0xFFFF:04x}"

    @property
    def is_software_or_remote(self) -> bool:
        return bool(self.flags & (FLAG_REMOTE | FLAG_SOFTWARE))


AdapterLister = Callable[[], list[DxgiAdapter]]
"""Returns every DXGI adapter; raises OSError when DXGI cannot be asked."""


def list_adapters() -> list[DxgiAdapter]:
    """Every adapter DXGI enumerates (Windows only; OSError when DXGI fails)."""
    import ctypes
    from ctypes import wintypes

    class Luid(ctypes.Structure):
        _fields_ = [("LowPart", wintypes.DWORD), ("HighPart", wintypes.LONG)]

    class AdapterDesc1(ctypes.Structure):
        _fields_ = [
            ("Description", ctypes.c_wchar * 128),
            ("VendorId", ctypes.c_uint),
            ("DeviceId", ctypes.c_uint),
            ("SubSysId", ctypes.c_uint),
            ("Revision", ctypes.c_uint),
            ("DedicatedVideoMemory", ctypes.c_size_t),
            ("DedicatedSystemMemory", ctypes.c_size_t),
            ("SharedSystemMemory", ctypes.c_size_t),
            ("AdapterLuid", Luid),
            ("Flags", ctypes.c_uint),
        ]

    class Guid(ctypes.Structure):
        _fields_ = [
            ("Data1", wintypes.DWORD),
            ("Data2", wintypes.WORD),
            ("Data3", wintypes.WORD),
            ("Data4", ctypes.c_ubyte * 8),
        ]

    hresult = ctypes.c_long

    def method(obj: ctypes.c_void_p, slot: int, *argtypes: Any) -> Any:
        vtable = ctypes.cast(obj, ctypes.POINTER(ctypes.POINTER(ctypes.c_void_p)))[0]
        prototype = ctypes.WINFUNCTYPE(hresult, ctypes.c_void_p, *argtypes)  # type: ignore[attr-defined]
        return prototype(vtable[slot])

    def release(obj: ctypes.c_void_p) -> None:
        if obj:
            ctypes.WINFUNCTYPE(ctypes.c_ulong, ctypes.c_void_p)(  # type: ignore[attr-defined]
                ctypes.cast(obj, ctypes.POINTER(ctypes.POINTER(ctypes.c_void_p)))[0][_RELEASE]
            )(obj)

    iid = Guid()
    ole32: Any = ctypes.windll.ole32  # type: ignore[attr-defined]
    if ole32.CLSIDFromString(ctypes.c_wchar_p(IID_IDXGIFACTORY1), ctypes.byref(iid)) != 0:
        raise OSError("the DXGI interface id could not be parsed")
    dxgi: Any = ctypes.windll.dxgi  # type: ignore[attr-defined]
    create = dxgi.CreateDXGIFactory1
    create.restype = hresult
    create.argtypes = [ctypes.POINTER(Guid), ctypes.POINTER(ctypes.c_void_p)]
    factory = ctypes.c_void_p()
    result = create(ctypes.byref(iid), ctypes.byref(factory))
    if result != 0:
        raise OSError(f"CreateDXGIFactory1 failed with 0x{result & 0xFFFFFFFF:08X}")
    adapters: list[DxgiAdapter] = []
    try:
        enum = method(factory, _ENUM_ADAPTERS1, ctypes.c_uint, ctypes.POINTER(ctypes.c_void_p))
        for index in range(_MAX_ADAPTERS):
            adapter = ctypes.c_void_p()
            result = enum(factory, index, ctypes.byref(adapter))
            if result & 0xFFFFFFFF == DXGI_ERROR_NOT_FOUND:
                break
            if result != 0:
                raise OSError(f"EnumAdapters1 failed with 0x{result & 0xFFFFFFFF:08X}")
            try:
                desc = AdapterDesc1()
                get_desc = method(adapter, _GET_DESC1, ctypes.POINTER(AdapterDesc1))
                if get_desc(adapter, ctypes.byref(desc)) != 0:
                    continue  # this adapter says nothing; the others may
                adapters.append(
                    DxgiAdapter(
                        luid_high=desc.AdapterLuid.HighPart,
                        luid_low=desc.AdapterLuid.LowPart,
                        description=desc.Description,
                        vendor_id=desc.VendorId,
                        device_id=desc.DeviceId,
                        dedicated_video_memory=desc.DedicatedVideoMemory,
                        flags=desc.Flags,
                    )
                )
            finally:
                release(adapter)
    finally:
        release(factory)
    return adapters
