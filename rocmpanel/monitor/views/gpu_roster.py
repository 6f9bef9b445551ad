"""Which GPUs the Monitor's sampler reads, and the newest list it answered with.

With ``follow`` set (the live machine), the list is the app's machine inventory: the
Monitor shows the same cards under the same names as the other tabs, and follows a
refresh. Until the inventory is first detected the sampler reads the host only; when the
detection fails it finds the GPUs in sysfs itself. Without ``follow`` (a captured tree,
which the inventory does not describe) the sampler finds them in the tree from the start.

The sampler answers its start and every ``set_gpus`` with one ``gpus_found``, in order;
answers to requests that a newer one has replaced are skipped, so a stale list never shows.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal, Slot

from rocmpanel.base.i18n import QT_TRANSLATE_NOOP, translate
from rocmpanel.gui.inventory import InventoryHolder
from rocmpanel.machine.inventory import Inventory
from rocmpanel.monitor.sample import GpuIdentity
from rocmpanel.monitor.sampler import SamplerThread
from rocmpanel.monitor.source import FoundGpus
from rocmpanel.monitor.source_factory import identity_of

LOOKING = QT_TRANSLATE_NOOP("GpuRoster", "Looking for GPUs…")


def gpus_of(inventory: Inventory) -> tuple[GpuIdentity, ...]:
    """The inventory's GPUs as the Monitor names them."""
    return tuple(identity_of(gpu) for gpu in inventory.gpus)


class GpuRoster(QObject):
    """``changed`` fires whenever ``identities``, ``found`` or ``waiting`` change."""

    changed = Signal()

    def __init__(
        self, inventory: InventoryHolder, follow: bool, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._inventory = inventory
        self.follow = follow
        self.waiting = False  # for the first inventory
        self.found: FoundGpus | None = None
        self.identities: dict[str, GpuIdentity] = {}
        self._sampler: SamplerThread | None = None
        self._requested: tuple[GpuIdentity, ...] | None = None
        self._unanswered = 0

    def initial(self) -> tuple[GpuIdentity, ...] | None:
        """What the sampler starts with (None: find the GPUs in the tree)."""
        if not self.follow:
            return None
        self._inventory.changed.connect(self._on_inventory_changed)
        self._inventory.failed.connect(self._on_inventory_failed)
        if self._inventory.current is not None:
            self._requested = gpus_of(self._inventory.current)
            return self._requested
        self.waiting = True
        self._requested = ()
        self._inventory.ensure()
        return ()

    def attach(self, sampler: SamplerThread) -> None:
        """Listen to ``sampler``, built with ``initial()``, before it starts."""
        self._sampler = sampler
        self._unanswered = 1  # its start
        sampler.gpus_found.connect(self._on_sampler_gpus_found)

    def learn(self, identities: list[GpuIdentity]) -> None:
        """GPUs a source found while reading (Windows PDH adapters)."""
        new = [g for g in identities if g.key not in self.identities]
        if new:
            self.identities.update((g.key, g) for g in new)
            self.changed.emit()

    def no_gpu_text(self) -> str:
        """What to say where the GPU panels would be ("" when there are GPUs)."""
        if self.identities:
            return ""
        if self.waiting:
            return translate("GpuRoster", LOOKING)
        if self.found is None or self._unanswered:
            return ""  # the answer to the newest request decides
        note = self.found.note or translate("GpuRoster", "No AMD GPU found.")
        return translate("GpuRoster", "{reason} Host telemetry is still shown above.").format(
            reason=note
        )

    def _request(self, gpus: tuple[GpuIdentity, ...] | None) -> None:
        self.waiting = False
        if gpus != self._requested and self._sampler is not None:
            self._requested = gpus
            self._unanswered += 1
            self._sampler.set_gpus(gpus)
        self.changed.emit()

    @Slot(object)
    def _on_inventory_changed(self, inventory: Inventory) -> None:
        self._request(gpus_of(inventory))

    @Slot(object)
    def _on_inventory_failed(self, _error: object) -> None:
        # The holder logs its error; without any inventory the sampler finds the GPUs.
        if self._inventory.current is None:
            self._request(None)

    @Slot(object)
    def _on_sampler_gpus_found(self, found: FoundGpus) -> None:
        self._unanswered = max(0, self._unanswered - 1)
        if self._unanswered:
            return  # a newer request is on its way
        self.found = found
        self.identities = {g.key: g for g in found.identities}
        self.changed.emit()
