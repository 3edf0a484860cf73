"""Facts from a home system's logs, end to end: stored lines, then ``state_of``.

The lines follow the formats of Home Assistant (logbook and state_changed events), openHAB
(events.log) and Zigbee2MQTT, written for the test; each was read wrongly or not at all before
its rule (docs/extraction.md).
"""

from __future__ import annotations

from typing import Any

T0 = 1_780_000_000.0
NOW = T0 + 10_000.0

_LINES = (
    'Garage Door changed to Open',
    "2024-01-12 07:32:10.004 [INFO ] [openhab.event.ItemStateChangedEvent] - Item 'FrontDoor_Contact' "
    'changed from CLOSED to OPEN',
    'Garage Door changed to Closed',
    '{"entity_id": "light.porch", "new_state": {"state": "on"}, "old_state": {"state": "off"}}',
    "Zigbee2MQTT:info  2024-01-12 07:31:45: MQTT publish: topic 'zigbee2mqtt/kitchen_door', "
    'payload \'{"contact":false,"battery":12}\'',
    'Washing Machine changed to Idle',
)


def test_a_home_systems_log_files_its_devices_states(mem_factory: Any) -> None:
    mem = mem_factory(clock=lambda: NOW)
    for i, line in enumerate(_LINES):
        mem.store(line, stamp=T0 + 60.0 * i)

    def now(entity: str, attribute: str = 'state') -> str:
        facts = mem.state_of(entity, attribute=attribute)
        return facts[0].value if facts else ''

    assert now('garage door') == 'closed'
    assert mem.state_of('garage door', attribute='state', as_of=T0 + 90.0)[0].value == 'open'
    assert now('front door') == 'open'
    assert now('porch light', 'power') == 'on'  # the new state, though written before the old one
    assert now('kitchen door') == 'open'  # a contact sensor's "contact": false
    assert now('washing machine') == 'idle'
    # A door sensor's battery is its own: the robot's battery level is not 12 %.
    assert now('kitchen door battery', 'level') == '12'
    assert [f.entity for f in mem.state_of('battery', attribute='level')] == ['kitchen door battery']


def test_a_numbered_device_is_found_by_its_name_without_the_number(mem_factory: Any) -> None:
    # "vacuum_01" is the robot vacuum; "lamp 2" is not "lamp 1".
    mem = mem_factory(clock=lambda: NOW)
    mem.store('[INFO] vacuum_01 status=cleaning room=kitchen battery=82%', stamp=T0)
    mem.store('[WARN] vacuum_01 status=stuck location=under_dining_table battery=61%', stamp=T0 + 900.0)
    mem.store('lamp_1 power=on', stamp=T0 + 950.0)
    assert mem.state_of('the robot vacuum', attribute='state')[0].value == 'stuck'
    assert mem.state_of('the robot vacuum', attribute='location', as_of=T0 + 600.0)[0].value == 'kitchen'
    assert mem.state_of('lamp 2') == []
    assert mem.state_of('lamp 1', attribute='power')[0].value == 'on'
    # Named as the log names it, without the number: "stapler_01" is the stapler.
    mem.store('[INFO] [manip]: place_object obj=stapler_01 target=printer_table result=SUCCESS',
              stamp=T0 + 990.0)
    assert mem.state_of('the stapler', attribute='location')[0].value == 'printer table'
    # A labelled compartment's door is the compartment's, whatever its label.
    mem.store('DELIV | order=MED-4412 compartment=C2 door=OPEN', stamp=T0 + 995.0)
    assert mem.state_of('compartment C2', attribute='state')[0].value == 'open'
    # A label of letters and digits is a number all the same ("drill_DR3" is the drill).
    mem.store('charger_bay_1: tool=drill_DR3 state=CHARGING', stamp=T0 + 996.0)
    assert mem.state_of('the drill', attribute='state')[0].value == 'charging'
    # A plural before the label is found by its singular ("pruning_shears_1": the pruning shears).
    mem.store('robot=garden_bot_1 action=hang item=pruning_shears_1 on=tool_wall_hook_5 result=ok',
              stamp=T0 + 997.0)
    assert mem.state_of('the pruning shears', attribute='location')[0].value == 'tool wall hook 5'
    # One letter is a label too ("pill_cup_B" is the pill cup).
    mem.store('BT tick 420 | Sequence[DeliverMeds] | Place(pill_cup_B, target=bedside_table_room_7) '
              '-> SUCCESS', stamp=T0 + 998.0)
    assert mem.state_of('the pill cup', attribute='location')[0].value == 'bedside table room 7'
