"""State changes of log records (brainmem_ros/encoders/log_records.py) through the real parser
extractor: the fields and thing-state pairs that perception and navigation software prints.

Each line here is written for the test in a format of its own; before the record reader the
parser read nothing, or a wrong thing, from every one of them.
"""

from __future__ import annotations

import pytest

from brainmem_ros.encoders.log_records import RecordReader
from brainmem_ros.encoders.parsed import HELD, SpacyExtractor
from brainmem_ros.encoders.record_fields import role_key
from brainmem_ros.memory.types import StateChange


@pytest.fixture(scope='module')
def x() -> SpacyExtractor:
    return SpacyExtractor()


def _changes(x: SpacyExtractor, text: str) -> set[tuple[str, str, str]]:
    return {(c.object, c.attribute, c.after) for c in x.extract(text).state_changes}


@pytest.mark.parametrize(('text', 'changes'), [
    # Role keys: the thing, its place, its state.
    ('detector | obj=teapot | conf=0.77 | loc=stove top', {('teapot', 'location', 'stove top')}),
    ('class: stapler  where: second shelf of the cabinet  score: 81%',
     {('stapler', 'location', 'second shelf')}),
    ('det#9 label=mop state=wet', {('mop', 'state', 'wet')}),
    ('<obj class="flower pot" status="broken" p="0.8"/>', {('flower pot', 'state', 'broken')}),
    ('{"item": "umbrella stand", "from": "open", "to": "closed"}', {('umbrella stand', 'state', 'closed')}),
    ('{"object": "suitcase", "from": "porch", "to": "guest room"}', {('suitcase', 'location', 'guest room')}),
    ('edge {"obj": "lamp", "rel": "on", "target": "side table"}', {('lamp', 'location', 'side table')}),
    # A thing given with its confidence, and a place phrase after it.
    ('yolo11 frame=88 | teddy bear 0.93 | on: rocking chair', {('teddy bear', 'location', 'rocking chair')}),
    ('Seen: blender (87%) beside the toaster', {('blender', 'location', 'toaster')}),
    # A thing and its state, however the pair is written.
    ('panel >> garage light: ON | porch light: OFF',
     {('garage light', 'power', 'on'), ('porch light', 'power', 'off')}),
    ('check result: pantry door = AJAR (p=0.71)', {('pantry door', 'state', 'ajar')}),
    ('cabinet 2 latched->unlocked', {('cabinet 2', 'state', 'unlocked')}),
    ('sweep done, shower floor WET, bin FULL', {('shower floor', 'state', 'wet'), ('bin', 'state', 'full')}),
    ('toilet 3 stauts: blocked', {('toilet 3', 'state', 'blocked')}),  # a key one slip away
    ('fn_classify(freezer door) -> open 0.95', {('freezer door', 'state', 'open')}),
    # A word between the thing and its state ("left on" is on; "left" was a thing).
    ('WARN: TV left on', {('tv', 'power', 'on')}),
    ('ALERT: stove still ON, nobody in kitchen', {('stove', 'power', 'on')}),
    # Places and holding in telegraphic past, and a move with an arrow.
    ('[fleet] cart_12 parked at loading bay', {('cart 12', 'location', 'loading bay')}),
    ('grasp(box) OK -> box held', {('box', 'location', HELD)}),
    ('tracker: stroller moved: porch -> hallway', {('stroller', 'location', 'hallway')}),
    # Readings.
    ('heartbeat | batt=61% | speed=0.2', {('battery', 'level', '61 %')}),
    ('ward 5 temp 21.5 C, quiet', {('ward 5', 'temperature', '21.5 C')}),
    # Under a state key any word is the state; a device key names the thing.
    ('ts=07:15 device=coffee_machine state=brewing', {('coffee machine', 'state', 'brewing')}),
    ('status: batt 54%, mode=PATROL', {('battery', 'level', '54 %')}),
    # More keys of places and states; an identifier's first word is part of its name.
    ('[det] cam_kitchen obj=thermos conf=0.91 region=counter_left',
     {('thermos', 'location', 'counter left')}),
    ('manip: place OK obj=step_stool dst=pantry', {('step stool', 'location', 'pantry')}),
    ('state_changed entity_id=cover.patio_blind old_state=open new_state=closed',
     {('patio blind', 'state', 'closed')}),
    # A classifier's target is its thing when no other field names one.
    ('state_clf v2.3 | target=kettle | pred=boiling | p=0.89', {('kettle', 'state', 'boiling')}),
    # Fields split by semicolons; a lone state word is the thing's.
    ('18:10:05;contact.freezer_door;open', {('freezer door', 'state', 'open')}),
    # A device switched on or off, however the line goes on; a switch names what it switches;
    # a climate device named by its room; its mode and set point.
    ("switch.garden_sprinkler turned on by schedule 'morning_lawn'", {('garden sprinkler', 'power', 'on')}),
    ('light.bedroom_lamp turned on at 22:10', {('bedroom lamp', 'power', 'on')}),  # a clock's colon
    # A state reported as a change; a door sensor's on and off are open and closed.
    ('cover.garage_door changed to open', {('garage door', 'state', 'open')}),
    ('lock.front_door changed from unlocked to locked', {('front door', 'state', 'locked')}),
    ('binary_sensor.back_door changed to off', {('back door', 'state', 'closed')}),
    ('binary_sensor.back_door: on', {('back door', 'state', 'open')}),
    # A window named noun first ("window_kitchen", the kitchen window's key) is an opening too:
    # its sensor's off is closed.
    ('binary_sensor.window_kitchen: off', {('window kitchen', 'state', 'closed')}),
    # A reading of what a name's last word measures, however the line gives it; a setting.
    ('fridge_temp=5.2C', {('fridge', 'temperature', '5.2C')}),
    ('sensor.living_room_temperature changed to 21.5', {('living room', 'temperature', '21.5')}),
    ('climate.bedroom set to 19 degrees', {('bedroom climate', 'setting', '19 degrees')}),
    ('light.kitchen brightness=80%', {('kitchen light', 'level', '80%')}),
    # An entity id of one word is a record all the same (it had read as prose: nothing).
    ('media_player.tv changed to playing', {('tv', 'state', 'playing')}),
    ('switch.fan turned on', {('fan', 'power', 'on')}),
    ('light.porch changed to off', {('porch light', 'power', 'off')}),
    # A device of its own before its number: a lamp, not the kitchen lamp's light.
    ('hass: light.kitchen_lamp_02 -> on (trigger=motion_kitchen)', {('kitchen lamp 02', 'power', 'on')}),
    ('[INFO] [door_monitor]: front door opened', {('front door', 'state', 'open')}),
    ('{"entity": "climate.living_room", "hvac_mode": "heat", "target_temp": 21}',
     {('living room climate', 'state', 'heat'), ('living room climate', 'setting', '21')}),
    # A fill level is a reading of the thing the record is about.
    ('[bin] obj=recycling_bin fill=95%', {('recycling bin', 'level', '95%')}),
    # A thing given with its state is the record's thing, not the source's bare word.
    ('18:11:05;vision;ice tray: empty; location: kitchen sink',
     {('ice tray', 'state', 'empty'), ('ice tray', 'location', 'kitchen sink')}),
    # Home automation ids: the kind of device, then which one.
    ('light.porch: off (timer)', {('porch light', 'power', 'off')}),
    ('switch.kitchen_light: on', {('kitchen light', 'power', 'on')}),
    ('binary_sensor.garage_door: closed', {('garage door', 'state', 'closed')}),
    # An entity id's value is its state, whatever the word; a "_status" suffix names no thing.
    ('sensor.ev_charger_status: charging', {('ev charger', 'state', 'charging')}),
    # An appliance's entity reports its cycle.
    ('sensor.washing_machine_status: finished', {('washing machine', 'state', 'finished')}),
    # A device's kind names it, unless its name ends in a device ("floor lamp").
    ('state_changed entity_id=light.hallway_ceiling old_state=on new_state=off',
     {('hallway ceiling light', 'power', 'off')}),
    ('state_changed entity_id=light.living_room_floor_lamp old_state=off new_state=on',
     {('living room floor lamp', 'power', 'on')}),
    # A task that succeeded: the state its verb leaves the thing in, or the person it is for.
    ('TASK#416 close item=back_door status=SUCCESS duration=22s', {('back door', 'state', 'closed')}),
    ('job=77 action=unlock device=side_gate result=done', {('side gate', 'state', 'unlocked')}),
    # A command log names its device first, the action as a field.
    ('[CMD] cover.shed_door action=close status=ok', {('shed door', 'state', 'closed')}),
    ('TASK#414 fetch item=dog_lead to=user:Aroha status=SUCCESS', {('dog lead', 'location', 'aroha')}),
    # A bare name is a person's when it is no word of a thing or a room.
    ('task=fetch obj=flashlight to=Mia result=success', {('flashlight', 'location', 'mia')}),
    # The verb's thing in its name, the person under a key of its own.
    ('task fetch_object object=reading_glasses deliver_to=Maya status=done',
     {('reading glasses', 'location', 'maya')}),
    ('call_service domain=light service=turn_off target=light.porch', {('porch light', 'power', 'off')}),
    # Lines of their own are fields (YAML); a time stamp before a device; a detector's "cls".
    ('sensor: window_contact\nroom: bedroom\nname: bedroom_window\nstate: closed',
     {('bedroom window', 'state', 'closed'), ('window', 'location', 'bedroom')}),  # (its contact's room)
    ('2024-06-01T07:10:03Z cover.garage_door state=closed', {('garage door', 'state', 'closed')}),
    ('frame=1021 cls=teddy_bear bbox=[212,340,388,510] score=0.94 room=nursery surface=crib',
     {('teddy bear', 'location', 'crib')}),
    ('{"object": "kettle", "state": "on", "temp": 96}',
     {('kettle', 'power', 'on'), ('kettle', 'temperature', '96')}),
    # A colour tells a thing from others of its kind; a tracker's tag is its thing.
    ('[INFO] [1718000600.402] [object_tracker]: track_id=14 label=mug color=blue zone=dining_table',
     {('blue mug', 'location', 'dining table')}),
    ('tracker tag=tv_remote x=7.40 y=1.90 zone=living_room rssi=-70',
     {('tv remote', 'location', 'living room')}),
    # Who holds it; a path of places; a verb of seeing before the thing; a delivery's recipient.
    ('INV-UPDATE item="cordless drill" loc=- holder=Marcus reason=checkout',
     {('cordless drill', 'location', 'marcus')}),
    ('INV-UPDATE item="tape measure" qty=1 loc=garage/drawer_2 holder=-',
     {('tape measure', 'location', 'garage drawer 2')}),
    ('perception: found car_keys at=hallway_console conf=0.95', {('car key', 'location', 'hallway console')}),
    ('planner: task=deliver_keys status=succeeded object=car_keys delivered_to=Tom',
     {('car key', 'location', 'tom')}),
    # XML elements are fields; a thing's "state" may be a task's word ("finished").
    ('<appliance id="dishwasher" room="kitchen"><state>running</state><program>eco 50</program></appliance>',
     {('dishwasher', 'location', 'kitchen'), ('dishwasher', 'state', 'running')}),
    ('<appliance id="washing_machine"><state>finished</state></appliance>',
     {('washing machine', 'state', 'finished')}),
    # The two sides of a change by other names.
    ('{"event": "state_change", "entity": "garage_door", "old": "closed", "new": "open"}',
     {('garage door', 'state', 'open')}),
    ('object=remote_control prev=sofa new=tv_stand', {('remote control', 'location', 'tv stand')}),
    ('entity=garage_door previous=open new=closed', {('garage door', 'state', 'closed')}),
    # Who made a change, after its state ("by Alice"), leaves the state as it is.
    ('lock.front_door: unlocked by Alice', {('front door', 'state', 'unlocked')}),
    ('lock.front_door unlocked by Alice', {('front door', 'state', 'unlocked')}),
    ('light.porch: turned off by Bob', {('porch light', 'power', 'off')}),
    # A grasp that succeeded leaves its thing held, its outcome in a field or after the verb.
    ('[INFO] [grasp_server]: grasp OK object=red_cup from=dining_table', {('red cup', 'location', 'held')}),
    ('action=pick result=success object=red_cup', {('red cup', 'location', 'held')}),
    # An appliance's status is its cycle, entity id or not (not any word: "dishwasher: kitchen").
    ('[perception] washing_machine status: running', {('washing machine', 'state', 'running')}),
    ('dishwasher status: finished', {('dishwasher', 'state', 'finished')}),
    # An appliance key names the thing; its status is its cycle, a door field its door, which
    # says less than the thing's own state when the line gives both.
    ('[INFO] appliance=dishwasher door=open load=partial', {('dishwasher door', 'state', 'open')}),
    ('[INFO] appliance=dishwasher status=finished door=closed', {('dishwasher', 'state', 'finished')}),
    # A lock field is its door's state; a key "X_state" is X's; "holding=" is what the gripper holds.
    ('front_door lock=unlocked user=Dana', {('front door', 'state', 'unlocked')}),
    ('ts=1712 garage_door_state=closed', {('garage door', 'state', 'closed')}),
    ('arm: grasp done holding=green_cup', {('green cup', 'location', HELD)}),
    ('arm: release holding=none', set()),
    # The message after a header of pipes (a stamp, the node) is what the line says; a skill
    # reported done before a word of success is an act.
    ('3090.00 | lab_io | centrifuge_1 lid=CLOSED', {('centrifuge 1 lid', 'state', 'closed')}),
    ('3030.77 | arm_ctrl | grasp vial_red OK', {('vial red', 'location', HELD)}),
    ('3071.05 | arm_ctrl | release vial_red at centrifuge_rack OK',
     {('vial red', 'location', 'centrifuge rack')}),
    ('3071.05 | arm_ctrl | release vial_red at centrifuge_rack FAILED', set()),
    # A label under a kind of place is that place, and a door with no thing there its door; a
    # holder named by an id; "run" is a state; the inner place of a path that says where in it.
    ('item=crate_A17 bin=R4-S2', {('crate a17', 'location', 'bin r4 s2')}),
    ('DELIV | compartment=C2 door=OPEN', {('compartment c2 door', 'state', 'open')}),
    ('order=MED-4412 item=insulin_pen recipient=nurse_okafor', {('insulin pen', 'location', 'nurse okafor')}),
    ('centrifuge_1 run=ON', {('centrifuge 1', 'power', 'on')}),
    ('charger_bay_1: tool=drill_DR3 state=CHARGING', {('drill dr3', 'state', 'charging')}),
    # Keys that name the record's thing: a device ("dev"), an artifact, an asset, a product.
    ('RFID reader=RDR-04 zone=conservation_lab tag=E200-3412 artifact=bronze_figurine_44 rssi=-47',
     {('bronze figurine 44', 'location', 'conservation lab')}),
    ('ts=30 dev=oven_02 setpoint=230C', {('oven 02', 'setting', '230C')}),
    # A value under the name the field before gives it.
    ('ts=900 dev=oven_02 event=power value=off', {('oven 02', 'power', 'off')}),
    # Under a state key any word is the thing's state.
    ('bilge_pump_1 state changed: off -> running', {('bilge pump 1', 'state', 'running')}),
    # An alarm's states are states.
    ('ALARM display_case_9 armed -> disarmed operator=Lena', {('display case 9', 'state', 'disarmed')}),
    ('obj=water_bottle_green loc=classroom_2B/under_desk_7', {('water bottle green', 'location', 'desk 7')}),
])
def test_record_fields(x: SpacyExtractor, text: str, changes: set[tuple[str, str, str]]) -> None:
    assert _changes(x, text) == changes


@pytest.mark.parametrize('text', [
    'sensor.kitchen_temperature: unavailable',  # no value, no state
    'detector | person 0.97 | bbox (10,20,30,40)',  # a detection with no place and no state
    'rejected: cat (0.18) below threshold',
    '[nav2] navigating to kitchen | eta=12s',
    'GOAL aborted: path blocked',
    'odom x=1.20 y=-0.40 yaw=0.10',
    'state: SEARCHING | target=keys',
    # Tasks not done, or not yet; a task's outcome is no door's state.
    'TASK#413 fetch item=dog_lead to=hall status=ABORTED reason=path_blocked',
    'TASK#419 tidy item=dog_lead to=coat_hooks status=QUEUED',
    'call_service domain=light service=turn_off target=light.hall -> error: device unreachable',
    'frame=6012 cls=teddy_bear score=0.22 room=kitchen surface=floor dropped=true (score<0.50)',
    'track_id=22 label=mug color=white zone=dishwasher conf=0.41 below threshold 0.60, detection ignored',
    # A failed task: nothing its words would say (the door left "open" by an obstruction).
    '{"entity_id": "cover.garage_door", "command": "close", "result": "aborted",'
    ' "error": "obstruction_detected", "state": "open"}',
    'perception: search obj=step_stool area=kitchen result=NOT_FOUND',
    'state_clf | target=stove_burner | pred=off | p=0.41 | REJECTED (p<0.60)',  # the whole record
    'seg_clf target=pantry_door pred=open conf=0.28 rejected (conf<0.5)',  # the verdict after its score
    # A call the device refused: the switch is not "denied", the climate not "blocked".
    'app cmd: switch.porch_light turn_off -> denied (user override)',
    'climate.bedroom set_mode -> blocked (window open)',
    'nav: pose (2.1, 3.4) in zone bedroom_2',  # nothing is where it is itself
    'grasp FAILED object=red_cup',
    'dishwasher: kitchen',
    'det: towel on floor (rejected)',  # a verdict in brackets
    # A search that found nothing; a task only queued.
    '>> SEARCH remote control in living room ... NOT FOUND',
    '[mission_planner] queued: deliver package to reception (priority=2)',
])
def test_records_that_state_no_change(x: SpacyExtractor, text: str) -> None:
    assert _changes(x, text) == set(), text


def test_prose_inside_a_record_is_parsed_alone(x: SpacyExtractor) -> None:
    # The parse of the whole line ran the tag into the sentence and read nothing.
    assert _changes(x, 'scene_diff(prev=t0, cur=t1): "The laundry basket is now empty."') == {
        ('laundry basket', 'state', 'empty')}
    got = _changes(x, 'describe(img_044) -> "the porch light is still on"')
    assert got == {('porch light', 'power', 'on')}
    # The tag is no thing of the sentence: the parse of the whole line put "vlm" on the armchair.
    assert _changes(x, 'vlm: "A cat is sleeping on the armchair."') == {('cat', 'location', 'armchair')}


def test_a_confidence_is_no_level(x: SpacyExtractor) -> None:
    # The parser read "93%" as a level of the place before it.
    assert _changes(x, 'Obj: glasses  Loc: nightstand  Conf: 93%') == {('glasses', 'location', 'nightstand')}


def test_prose_is_left_to_the_parser(x: SpacyExtractor) -> None:
    got = _changes(x, 'I put the red cup on the kitchen table.')
    assert got == {('red cup', 'location', 'kitchen table')}
    assert _changes(x, 'The garage door is open.') == {('garage door', 'state', 'open')}


def test_the_value_is_one_things_state(x: SpacyExtractor) -> None:
    # A parse of the whole line gave "OPEN" to the software's name ("door_opener").
    got = x.extract('door_opener: lab door -> OPEN').state_changes
    assert got == (StateChange('lab door', 'state', '', 'open'),)


def test_role_keys_allow_one_slip() -> None:
    assert [role_key(k) for k in ('stauts', 'locaton', 'Status', 'sate', 'bbox')] == [
        'status', 'location', 'status', 'sate', 'bbox']


def test_the_sides_of_a_change_by_other_names() -> None:
    assert [role_key(k) for k in ('old', 'previous', 'prev', 'new', 'old_state', 'previous_location')] == [
        'from', 'from', 'from', 'to', 'from', 'from']


@pytest.mark.parametrize('text', ['T: ' * 2500, 'a -> ' * 2000, 'x: y -> ' * 1200, 'k=v ' * 2000])
def test_a_deeply_nested_line_is_read_without_error(x: SpacyExtractor, text: str) -> None:
    # "a: b: c: ..." recursed once per field: thousands of them ended the Store in a
    # RecursionError.
    assert isinstance(x.extract(text).state_changes, tuple)


def test_a_speakers_line_is_parsed_once() -> None:
    # Prose after a software tag is parsed on its own; after a speaker's name the parse of
    # the whole line reads it well, and a second parse would double the Store's work.
    reader = RecordReader(frozenset(), frozenset(), frozenset(), frozenset())
    assert reader.sentences('Anna: I left the car keys on the hall table') == []
    assert reader.sentences('user: put the mug back in the cupboard please') == []
    assert reader.sentences('VLM: someone left a cane by the desk') == ['someone left a cane by the desk']


@pytest.mark.parametrize(('text', 'changes'), [
    # A robot's own steps: put somewhere, taken, moved between two places.
    ('exec: place sponge -> sink_left', {('sponge', 'location', 'sink left')}),
    ('nav: reached pantry; picked cereal_box; placed cereal_box -> top_shelf',
     {('cereal box', 'location', 'top shelf')}),
    ('pick stapler; nav: office -> hall', {('stapler', 'location', HELD)}),
    ('grab watering_can; place -> balcony_rail', {('watering can', 'location', 'balcony rail')}),
    ('moved flower_vase: mantel -> dining_table', {('flower vase', 'location', 'dining table')}),
    ('item backpack @ coat_rack', {('backpack', 'location', 'coat rack')}),
    # (The place a thing moved from is no thing moved; fields after the place are not in it.)
    ('moved house_keys: bowl -> hallway_drawer', {('house key', 'location', 'hallway drawer')}),
    ('ObjDet: backpack @ chair (bedroom) conf=0.84', {('backpack', 'location', 'chair')}),
    # A place phrase between a detected thing and its confidence is where it is.
    ('segmentation: towel on floor (0.81), bathroom', {('towel', 'location', 'floor')}),
    ('det: towel on sofa 0.9', {('towel', 'location', 'sofa')}),
    # A sensor's id before the thing it watches is not the thing's name.
    ('door_sensor front_door state=open', {('front door', 'state', 'open')}),
    # Calls done (an order or a plan is not), attribute paths, sightings at a place.
    ('job fetch(umbrella) done', {('umbrella', 'location', HELD)}),
    ('job place(umbrella, hall_stand) success', {('umbrella', 'location', 'hall stand')}),
    ('plant_pot.loc = windowsill', {('plant pot', 'location', 'windowsill')}),
    ('task handover(wallet, Sam) ok', {('wallet', 'location', 'sam')}),  # handed over: Sam has it
    # A behaviour tree's calls with keyword arguments.
    ('BT tick 340 | Sequence[DeliverMeds] | Pick(pill_cup_B, at=med_trolley_1) -> SUCCESS',
     {('pill cup b', 'location', HELD)}),
    ('BT tick 95 | Sequence[FetchWalker] | Push(walker_frame_2, target=bedside_room_7) -> SUCCESS',
     {('walker frame 2', 'location', 'bedside room 7')}),
    ('[vision] laptop_grey 0.84 @ sofa_arm | mug 0.77 @ side_table',
     {('laptop grey', 'location', 'sofa arm'), ('mug', 'location', 'side table')}),
    # A tag before key=value fields names their thing.
    ('fridge_door: state=open', {('fridge door', 'state', 'open')}),
    ('kettle: power=off', {('kettle', 'power', 'off')}),
])
def test_action_logs(x: SpacyExtractor, text: str, changes: set[tuple[str, str, str]]) -> None:
    assert _changes(x, text) == changes


@pytest.mark.parametrize('text', [
    'received order: place(umbrella, hall_stand)',  # asked, not done
    'plan: fetch(umbrella) at 17:00',
    'job place(umbrella, hall_stand) cancelled',
])
def test_orders_and_plans_state_nothing(x: SpacyExtractor, text: str) -> None:
    assert _changes(x, text) == set(), text


def test_a_failed_step_states_nothing(x: SpacyExtractor) -> None:
    assert _changes(x, 'grasp mug: failed; nav: kitchen -> hall') == set()
    assert _changes(x, 'place vase -> shelf_3: error, gripper slipped') == set()


def test_a_state_of_part_degree_in_a_record_keeps_its_degree(x: SpacyExtractor) -> None:
    # "partly_closed" is not closed; it was read as nothing, and a later reading's state stood.
    assert _changes(x, 'blind_clf target=bedroom_curtains pred=partly_closed p=0.91') == {
        ('bedroom curtain', 'state', 'partly closed')}
    assert _changes(x, 'window_clf | target=attic_window | state=half-open | conf=0.9') == {
        ('attic window', 'state', 'half open')}
    assert _changes(x, 'seg_clf target=pantry_door pred=open conf=0.88') == {('pantry door', 'state', 'open')}


def test_a_capital_letter_after_a_place_is_its_label(x: SpacyExtractor) -> None:
    # "shelf C" was read as a thing called "c" and dropped; "shelf B" was a place.
    assert _changes(x, 'item=socket set | place=rack C') == {('socket set', 'location', 'rack c')}


@pytest.mark.parametrize(('text', 'changes'), [
    # Written for the test in formats of common robot and home-automation software.
    ('[INFO] [1717400000.123] [object_tracker]: mug_blue moved from sink to drying_rack',
     {('mug blue', 'location', 'drying rack')}),
    ('[WARN] [door_monitor]: front_door state changed: closed -> open', {('front door', 'state', 'open')}),
    ('location_update item=glasses new_location=nightstand', {('glasses', 'location', 'nightstand')}),
    ('[tracker] glasses -> nightstand', {('glasses', 'location', 'nightstand')}),
    ('ALERT garage door left open for 30 min', {('garage door', 'state', 'open')}),
    # A call after a node's name; things written at their places.
    ('/robot/manipulation: grasp(cup_red) -> SUCCESS', {('cup red', 'location', HELD)}),
    ('inventory: wallet@desk umbrella@coat_rack', {('wallet', 'location', 'desk'),
                                                   ('umbrella', 'location', 'coat rack')}),
    # A message topic and its payload; a sensor's measure under a dotted name.
    ('house/porch/gate/state CLOSED', {('porch gate', 'state', 'closed')}),
    ('zigbee2mqtt/office/fan OFF', {('office fan', 'power', 'off')}),
    ('sensor.freezer_temperature: -18 °C', {('freezer', 'temperature', '-18 °C')}),
    # A home system's event: a state inside "old_state" is the old one, whatever the order;
    # the parse of the braces reads no thing ('"data": {' had switched a "datum" off).
    ('{"event_type": "state_changed", "data": {"entity_id": "binary_sensor.door_bathroom", '
     '"old_state": {"state": "off"}, "new_state": {"state": "on"}}}', {('door bathroom', 'state', 'open')}),
    ('{"entity_id": "light.porch", "new_state": {"state": "on"}, "old_state": {"state": "off"}}',
     {('porch light', 'power', 'on')}),
    ('{"entity_id": "cover.garage_door", "new_state": {"state": "closed", "attributes": '
     '{"friendly_name": "Garage Door"}}, "old_state": {"state": "open"}}',
     {('garage door', 'state', 'closed')}),
    # A device's name in quotes after its kind; a device's status changed to any word.
    ("Switch 'Hallway Light' turned ON", {('hallway light', 'power', 'on')}),
    ("Contact sensor 'Back Door' is OPEN", {('back door', 'state', 'open')}),
    ("Device 'Dishwasher' status changed to 'Running'", {('dishwasher', 'state', 'running')}),
    ('Kettle state changed to boiling', {('kettle', 'state', 'boiling')}),
    # A device's battery is its own, not the robot's; a dock's or an unknown tag's is the robot's.
    ('vacuum.roborock battery=80', {('roborock vacuum battery', 'level', '80')}),
    ('{"entity_id": "sensor.front_door", "battery": 45}', {('front door battery', 'level', '45')}),
    ('turtlebot4: battery=54%', {('battery', 'level', '54 %')}),
    ('vacuum_dock: battery=100%', {('battery', 'level', '100 %')}),
    # A message topic before its JSON payload names the thing; a contact sensor's magnet touches
    # when the door is closed.
    ("Zigbee2MQTT:info  2024-01-12 07:31:45: MQTT publish: topic 'zigbee2mqtt/kitchen_door', "
     'payload \'{"contact":false,"battery":97}\'',
     {('kitchen door', 'state', 'open'), ('kitchen door battery', 'level', '97')}),
    ('MQTT publish: topic \'zigbee2mqtt/desk_lamp\', payload \'{"state":"ON"}\'',
     {('desk lamp', 'power', 'on')}),
    # openHAB's item names: words run together, a sensor named after what it watches.
    ("[openhab.event.ItemStateChangedEvent] - Item 'FrontDoor_Contact' changed from CLOSED to OPEN",
     {('front door', 'state', 'open')}),
    ("[openhab.event.ItemStateChangedEvent] - Item 'LivingRoom_Temperature' changed from 20.5 to 21.0",
     {('living room', 'temperature', '21.0')}),
    # A thing attached to the robot's gripper is held.
    ("[pick_place]: Object 'blue_cup' attached to gripper", {('blue cup', 'location', HELD)}),
    # A robot's link is the robot ("link 'panda_hand'"): attached to it is held; detached from it
    # is not (it had been filed at a "link", then held).
    ("[pick_and_place]: Object 'red_box' attached to link 'gripper_link'", {('red box', 'location', HELD)}),
    ("[moveit_ros.planning_scene_monitor]: Attached object 'cup' to link 'panda_hand'", set()),
    ("[moveit_ros.planning_scene_monitor]: Detached object 'cup' from link 'panda_hand'", set()),
    # A generic kind before a quoted name is not the thing, nor the place.
    ("[pick_place] Placed object 'red_box' on surface 'table_2'", {('red box', 'location', 'table 2')}),
    # An identifier in quotes is read as the name it is.
    ("Picked 'cup_1' from 'shelf_3'", {('cup 1', 'location', HELD)}),
    # What the robot's gripper closes on, it holds.
    ("[gripper_controller] Gripper closed on object 'bottle'", {('bottle', 'location', HELD)}),
    # A detector's person is the person named ("person 'Alice'" had filed a "person"), and a
    # report's capitalised verb before a name is no part of it ("Detected Alice" was one name).
    ("Detected person 'Alice' in 'living_room'", {('alice', 'location', 'living room')}),
    ('Detected Alice in the kitchen.', {('alice', 'location', 'kitchen')}),
    ('Saw Alice in the living room.', {('alice', 'location', 'living room')}),
    # A tracker's frame is where the thing is; a reference frame of the map is no place.
    ('[object_tracker]: track id=7 class=mug color=red frame=kitchen_counter conf=0.92',
     {('red mug', 'location', 'kitchen counter')}),
    ('det class=cup frame=world conf=0.9', set()),
    # A change written with an arrow after "changed".
    ('[ha_bridge]: sensor.dishwasher_status changed idle -> running', {('dishwasher', 'state', 'running')}),
    # A task that placed its thing leaves it at the task's place.
    ('[manipulation_server]: place succeeded: object=blue_mug target=dishwasher_top_rack',
     {('blue mug', 'location', 'dishwasher top rack')}),
    # A behaviour tree's node names its task; a gripper flag says the thing is held.
    ('bt_executor | tick=1233 | node=HandOver | status=SUCCESS | object=tv_remote | recipient=Sam',
     {('tv remote', 'location', 'sam')}),
    ('bt | node=DetectObject | status=SUCCESS | object=tv_remote | in_gripper=true',
     {('tv remote', 'location', HELD)}),
    # A detector's person is the record's subject, not the software that logged it.
    ('bt_executor | tick=1801 | node=DetectPerson | status=SUCCESS | person=Sam | location=kitchen',
     {('sam', 'location', 'kitchen')}),
    # Whose a detected thing is; who holds it says more than the room.
    ('{"t": 1719832800.0, "det": "keys", "owner_tag": "anna", "surface": "hall_console", "conf": 0.91}',
     {("anna's key", 'location', 'hall console')}),
    ('{"det": "keys", "owner_tag": "anna", "held_by": "person:Anna", "room": "hallway", "conf": 0.78}',
     {("anna's key", 'location', 'anna')}),
    # A change of one attribute of a device, old and new.
    ('state_changed entity_id=climate.living_room attribute=temperature old=18 new=20',
     {('living room climate', 'temperature', '20')}),
    # A qualifier in brackets after the noun says which one ("towel (blue)"); a score ending a
    # line of prose is no part of it (the parser made "conf=0.71" the line's verb).
    ('[perception_node]: detected towel (blue) on bathroom_rail, conf=0.93',
     {('blue towel', 'location', 'bathroom rail')}),
    ('[WARN] [1718101500.010] [perception_node]: towel (white) on bathroom_floor, conf=0.71',
     {('white towel', 'location', 'bathroom floor')}),
    # An item's "_Power" is its thing's power; a side before a noun is no state ("right").
    ("[vent.ItemStateChangedEvent] - Item 'CoffeeMachine_Power' changed from OFF to ON",
     {('coffee machine', 'power', 'on')}),
    ('DRAWER-CLS left drawer: OPEN conf=0.88 | right drawer: CLOSED conf=0.91',
     {('left drawer', 'state', 'open'), ('right drawer', 'state', 'closed')}),
    # A place field that names a holder.
    ('ts=2024-05-02T08:20:00 tracker obj=glasses owner=grace loc=held_by:grace',
     {("grace's glasses", 'location', 'grace')}),
    # An aside's doubt is about something else.
    ('[BT] Sequence<CheckLights> -> office light ON (should be OFF after 20:00)',
     {('office light', 'power', 'on')}),
    # A measure changed with an arrow; a state in snake case under a state key.
    ('[INFO] [hvac_bridge]: climate.office setpoint 24 -> 26', {('office climate', 'setting', '26')}),
    ('climate.office state=fan_only setpoint=26',
     {('office climate', 'state', 'fan only'), ('office climate', 'setting', '26')}),
    # A number under "target" is what the thing is set to, not a place.
    ('oven.kitchen: state=preheating target=200C',
     {('kitchen oven', 'state', 'preheating'), ('kitchen oven', 'setting', '200C')}),
    # A generic level field is a reading; "kids" is no "ki".
    ('battery_monitor device=tablet_kids level=12% charging=false', {('tablet kid', 'level', '12%')}),
    # The thing after a time stamp is the subject of every field.
    ('2024-06-11T09:28:20Z vacuum.robovac state=charging location=dock battery_level=39',
     {('robovac vacuum', 'state', 'charging'), ('robovac vacuum', 'location', 'dock'),
      ('robovac vacuum battery', 'level', '39')}),
])
def test_common_log_formats(x: SpacyExtractor, text: str, changes: set[tuple[str, str, str]]) -> None:
    assert _changes(x, text) == changes


@pytest.mark.parametrize('text', [
    'nav: kitchen -> hallway',  # the robot's route: places, not a thing
    'mode: cooling -> heating',  # a mode
    'route: hallway -> bedroom',
    'mail from anna@example.com received',  # an address
])
def test_arrows_between_places_or_modes_move_nothing(x: SpacyExtractor, text: str) -> None:
    assert _changes(x, text) == set()


def test_a_phrasal_verb_in_speech_is_no_thing_switched(x: SpacyExtractor) -> None:
    # "Hold on" after a speaker's name was read as a field: a "hold" switched on.
    assert _changes(x, "Ravi: Hold on, where's my wallet? Oh, it's on the shelf.") == {
        ('wallet', 'location', 'shelf')}
    assert _changes(x, 'Tom: kettle on, toast in') == {('kettle', 'power', 'on')}


def test_a_verdict_of_not_found_inside_speech_denies_only_its_clause(x: SpacyExtractor) -> None:
    assert _changes(x, 'Anna: The cup is not found anywhere, but the plate is on the table.') == {
        ('plate', 'location', 'table')}


@pytest.mark.parametrize(('text', 'changes'), [
    # A PLC tag's name ends with the state; false is the opposite state (record_flags.py).
    ('2024-05-06 10:15:22.340 | PLC_K1 | WalkIn_Freezer.Door_Closed | TRUE -> FALSE | GOOD',
     {('walk in freezer door', 'state', 'open')}),
    ('2024-05-06 10:53:42.640 | PLC_K1 | Conveyor_Wash.Run | TRUE -> FALSE | GOOD',
     {('conveyor wash', 'state', 'stopped')}),
    ('2024-05-06 10:20:22.901 | PLC_K1 | Fryer_2.Heater_On | FALSE -> TRUE | GOOD',
     {('fryer 2 heater', 'power', 'on')}),
    ('WalkIn_Freezer.Door_Closed = FALSE', {('walk in freezer door', 'state', 'open')}),
    ('freezer_door_closed=false', {('freezer door', 'state', 'open')}),
    ('door_open=true', {('door', 'state', 'open')}),
    ('cabinet_locked=false', {('cabinet', 'state', 'unlocked')}),
    ('{"ts": 12, "cabinet_locked": true}', {('cabinet', 'state', 'locked')}),
    # A state with no opposite says nothing when false.
    ('bin_full=false', set()),
])
def test_flags_named_by_a_state(x: SpacyExtractor, text: str, changes: set[tuple[str, str, str]]) -> None:
    assert _changes(x, text) == changes


@pytest.mark.parametrize(('text', 'changes'), [
    # "X moved A -> B" with no colon after the verb: X is at B.
    ('[INFO] [1718004300.918] [wms_bridge]: Operator scan: tote_114 moved packing_station_3 -> lane_7',
     {('tote 114', 'location', 'lane 7')}),
    # A code with a dash is a label of the name, as one without is ("tube_S2231").
    ('item=tube_S-2231 from=rack_RK07 to=centrifuge_C1/bucket_2 action=transfer',
     {('tube s-2231', 'location', 'centrifuge c1 bucket 2')}),
])
def test_moves_with_an_arrow_and_codes_with_a_dash(x: SpacyExtractor, text: str,
                                                  changes: set[tuple[str, str, str]]) -> None:
    assert _changes(x, text) == changes


@pytest.mark.parametrize(('text', 'changes'), [
    # What a fleet or a lab moves is named under keys of freight and samples.
    ('ts=05:41:30Z level=info svc=fleetmgr event=hitched vehicle=tug_12 payload=baggage_cart_31 '
     'location=makeup_area_2', {('baggage cart 31', 'location', 'makeup area 2')}),
    ('event=scan specimen=urine_cup_4 location=lab_bench_2', {('urine cup 4', 'location', 'lab bench 2')}),
])
def test_freight_and_samples_name_the_thing(x: SpacyExtractor, text: str,
                                            changes: set[tuple[str, str, str]]) -> None:
    assert _changes(x, text) == changes


def test_no_entity_spans_a_record_s_marks(x: SpacyExtractor) -> None:
    # The parse of a record line joined keys and values into names ("level = info svc").
    names = {e.name for e in x.extract('ts=05:41:30Z level=info svc=fleetmgr event=hitched vehicle=tug_12 '
                                       'payload=baggage_cart_31 location=makeup_area_2').entities}
    assert {'tug 12', 'baggage cart 31', 'makeup area 2'} <= names
    assert not any(mark in n for n in names for mark in '=|"{}')
    line = '{"ts":"2024-06-03T14:13:22Z","robot":"tug-7","item":"box_blue"}'
    names = {e.name for e in x.extract(line).entities}
    assert not any(mark in n for n in names for mark in '=|"{}')
