//! Levels from files on real data (issue 47, item 1): serde-rs/json-benchmark's
//! `canada.json` (nested lists of float pairs), `citm_catalog.json` (maps, short
//! strings, small records) and `twitter.json` (nested records, escaped strings),
//! loaded into heap types and into a scope with `DeserializeIn`, from JSON and from
//! postcard.
//!
//! The data is not in this repository. Put the three files in one folder and point
//! `LEVEL_LOAD_DATA` at it (see docs/PERFORMANCE.md, "Levels from files on real data",
//! for one way to get them); without it the benchmark prints a note and does nothing,
//! so CI's `--test` run passes without the data.
//!
//! Both type families are written here from the files' shape: heap types with serde's
//! derive (`Vec`, `String`, `HashMap`, `Option<Box<_>>`; `deny_unknown_fields`, so they
//! cover every field of the file) and scope types with
//! `#[derive(DeserializeIn)]` (`&'s str`, `&'s [T]`, `ScopeMap`, `Option<&'s T>`). The
//! postcard files are written from the heap types once, at the start. Before anything
//! is timed, every scope load (JSON and postcard) is checked equal to the heap load
//! (both written to a `serde_json::Value` and compared), so a wrong type fails loudly;
//! each timed load is checked again by a count of its parts.
//!
//! Timing: `rounds` rounds (21 by default, `LEVEL_REAL_ROUNDS`); in each round every
//! file and format is loaded into heap types and into a scope, a batch of loads each
//! (about 40 ms), the order of the two ways alternating from round to round. Times are
//! the thread's CPU time of the loads only (dropping the heap types and closing the
//! scope are left out). The table gives the medians over rounds, their ratio, and the
//! median of the rounds' own ratios.
//!
//! `LEVEL_LOAD_PROFILE=json|postcard LEVEL_LOAD_LEVEL=canada|citm_catalog|twitter`
//! loads one file once each way inside `profiled_heap_load` / `profiled_scope_load`,
//! for callgrind (`scripts/level_profile.sh`).
//!
//! Run: `LEVEL_LOAD_DATA=/tmp/jsonbench cargo bench -p benches --profile release --bench level_real`.

mod common;

use std::collections::HashMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use scope_stack::serde::{DeserializeIn, ScopeMap};
use scope_stack::{LinearAllocator, ScopeStack};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

// ---- canada.json: a GeoJSON feature collection of polygons ----

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeapCanada {
    r#type: String,
    features: Vec<HeapFeature>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeapFeature {
    r#type: String,
    properties: HeapFeatureProps,
    geometry: HeapGeometry,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeapFeatureProps {
    name: String,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeapGeometry {
    r#type: String,
    coordinates: Vec<Vec<(f32, f32)>>,
}

#[derive(DeserializeIn, Serialize)]
struct Canada<'s> {
    r#type: &'s str,
    features: &'s [Feature<'s>],
}

#[derive(DeserializeIn, Serialize)]
struct Feature<'s> {
    r#type: &'s str,
    properties: FeatureProps<'s>,
    geometry: Geometry<'s>,
}

#[derive(DeserializeIn, Serialize)]
struct FeatureProps<'s> {
    name: &'s str,
}

#[derive(DeserializeIn, Serialize)]
struct Geometry<'s> {
    r#type: &'s str,
    coordinates: &'s [&'s [(f32, f32)]],
}

// ---- citm_catalog.json: tables of names by id, events, performances ----

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
struct HeapCitm {
    area_names: HashMap<String, String>,
    audience_sub_category_names: HashMap<String, String>,
    block_names: HashMap<String, String>,
    events: HashMap<String, HeapEvent>,
    performances: Vec<HeapPerformance>,
    seat_category_names: HashMap<String, String>,
    sub_topic_names: HashMap<String, String>,
    subject_names: HashMap<String, String>,
    topic_names: HashMap<String, String>,
    topic_sub_topics: HashMap<String, Vec<u32>>,
    venue_names: HashMap<String, String>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
struct HeapEvent {
    description: Option<String>,
    id: u32,
    logo: Option<String>,
    name: String,
    sub_topic_ids: Vec<u32>,
    subject_code: Option<String>,
    subtitle: Option<String>,
    topic_ids: Vec<u32>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
struct HeapPerformance {
    event_id: u32,
    id: u32,
    logo: Option<String>,
    name: Option<String>,
    prices: Vec<Price>,
    seat_categories: Vec<HeapSeatCategory>,
    seat_map_image: Option<String>,
    start: u64,
    venue_code: String,
}

/// A price places nothing, so it is the same type on both sides.
#[derive(Serialize, Deserialize, DeserializeIn, Clone, Copy)]
#[serde(rename_all = "camelCase")]
struct Price {
    amount: u32,
    audience_sub_category_id: u32,
    seat_category_id: u32,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
struct HeapSeatCategory {
    areas: Vec<HeapArea>,
    seat_category_id: u32,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
struct HeapArea {
    area_id: u32,
    block_ids: Vec<u32>,
}

#[derive(DeserializeIn, Serialize)]
#[serde(rename_all = "camelCase")]
struct Citm<'s> {
    area_names: ScopeMap<'s, &'s str, &'s str>,
    audience_sub_category_names: ScopeMap<'s, &'s str, &'s str>,
    block_names: ScopeMap<'s, &'s str, &'s str>,
    events: ScopeMap<'s, &'s str, Event<'s>>,
    performances: &'s [Performance<'s>],
    seat_category_names: ScopeMap<'s, &'s str, &'s str>,
    sub_topic_names: ScopeMap<'s, &'s str, &'s str>,
    subject_names: ScopeMap<'s, &'s str, &'s str>,
    topic_names: ScopeMap<'s, &'s str, &'s str>,
    topic_sub_topics: ScopeMap<'s, &'s str, &'s [u32]>,
    venue_names: ScopeMap<'s, &'s str, &'s str>,
}

#[derive(DeserializeIn, Serialize)]
#[serde(rename_all = "camelCase")]
struct Event<'s> {
    description: Option<&'s str>,
    id: u32,
    logo: Option<&'s str>,
    name: &'s str,
    sub_topic_ids: &'s [u32],
    subject_code: Option<&'s str>,
    subtitle: Option<&'s str>,
    topic_ids: &'s [u32],
}

#[derive(DeserializeIn, Serialize)]
#[serde(rename_all = "camelCase")]
struct Performance<'s> {
    event_id: u32,
    id: u32,
    logo: Option<&'s str>,
    name: Option<&'s str>,
    prices: &'s [Price],
    seat_categories: &'s [SeatCategory<'s>],
    seat_map_image: Option<&'s str>,
    start: u64,
    venue_code: &'s str,
}

#[derive(DeserializeIn, Serialize)]
#[serde(rename_all = "camelCase")]
struct SeatCategory<'s> {
    areas: &'s [Area<'s>],
    seat_category_id: u32,
}

#[derive(DeserializeIn, Serialize)]
#[serde(rename_all = "camelCase")]
struct Area<'s> {
    area_id: u32,
    block_ids: &'s [u32],
}

// ---- twitter.json: a search result of 100 statuses ----

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeapTwitter {
    statuses: Vec<HeapStatus>,
    search_metadata: HeapSearchMetadata,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeapStatus {
    metadata: HeapStatusMetadata,
    created_at: String,
    id: u64,
    id_str: String,
    text: String,
    source: String,
    truncated: bool,
    in_reply_to_status_id: Option<u64>,
    in_reply_to_status_id_str: Option<String>,
    in_reply_to_user_id: Option<u64>,
    in_reply_to_user_id_str: Option<String>,
    in_reply_to_screen_name: Option<String>,
    user: HeapUser,
    geo: Option<()>,
    coordinates: Option<()>,
    place: Option<()>,
    contributors: Option<()>,
    #[serde(default)]
    retweeted_status: Option<Box<HeapStatus>>,
    retweet_count: u32,
    favorite_count: u32,
    entities: HeapStatusEntities,
    favorited: bool,
    retweeted: bool,
    #[serde(default)]
    possibly_sensitive: Option<bool>,
    lang: String,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeapStatusMetadata {
    result_type: String,
    iso_language_code: String,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeapUser {
    id: u64,
    id_str: String,
    name: String,
    screen_name: String,
    location: String,
    description: String,
    url: Option<String>,
    entities: HeapUserEntities,
    protected: bool,
    followers_count: u32,
    friends_count: u32,
    listed_count: u32,
    created_at: String,
    favourites_count: u32,
    utc_offset: Option<i32>,
    time_zone: Option<String>,
    geo_enabled: bool,
    verified: bool,
    statuses_count: u32,
    lang: String,
    contributors_enabled: bool,
    is_translator: bool,
    is_translation_enabled: bool,
    profile_background_color: String,
    profile_background_image_url: String,
    profile_background_image_url_https: String,
    profile_background_tile: bool,
    profile_image_url: String,
    profile_image_url_https: String,
    #[serde(default)]
    profile_banner_url: Option<String>,
    profile_link_color: String,
    profile_sidebar_border_color: String,
    profile_sidebar_fill_color: String,
    profile_text_color: String,
    profile_use_background_image: bool,
    default_profile: bool,
    default_profile_image: bool,
    following: bool,
    follow_request_sent: bool,
    notifications: bool,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeapUserEntities {
    description: HeapUrls,
    #[serde(default)]
    url: Option<HeapUrls>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeapUrls {
    urls: Vec<HeapUrl>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeapUrl {
    url: String,
    expanded_url: String,
    display_url: String,
    indices: [u32; 2],
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeapStatusEntities {
    hashtags: Vec<HeapHashtag>,
    symbols: Vec<HeapHashtag>,
    urls: Vec<HeapUrl>,
    user_mentions: Vec<HeapMention>,
    #[serde(default)]
    media: Option<Vec<HeapMedia>>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeapHashtag {
    text: String,
    indices: [u32; 2],
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeapMention {
    screen_name: String,
    name: String,
    id: u64,
    id_str: String,
    indices: [u32; 2],
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeapMedia {
    id: u64,
    id_str: String,
    indices: [u32; 2],
    media_url: String,
    media_url_https: String,
    url: String,
    display_url: String,
    expanded_url: String,
    r#type: String,
    sizes: HeapSizes,
    #[serde(default)]
    source_status_id: Option<u64>,
    #[serde(default)]
    source_status_id_str: Option<String>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeapSizes {
    medium: HeapSize,
    small: HeapSize,
    thumb: HeapSize,
    large: HeapSize,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeapSize {
    w: u32,
    h: u32,
    resize: String,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeapSearchMetadata {
    completed_in: f64,
    max_id: u64,
    max_id_str: String,
    next_results: String,
    query: String,
    refresh_url: String,
    count: u32,
    since_id: u64,
    since_id_str: String,
}

#[derive(DeserializeIn, Serialize)]
struct Twitter<'s> {
    statuses: &'s [Status<'s>],
    search_metadata: SearchMetadata<'s>,
}

#[derive(DeserializeIn, Serialize)]
struct Status<'s> {
    metadata: StatusMetadata<'s>,
    created_at: &'s str,
    id: u64,
    id_str: &'s str,
    text: &'s str,
    source: &'s str,
    truncated: bool,
    in_reply_to_status_id: Option<u64>,
    in_reply_to_status_id_str: Option<&'s str>,
    in_reply_to_user_id: Option<u64>,
    in_reply_to_user_id_str: Option<&'s str>,
    in_reply_to_screen_name: Option<&'s str>,
    user: User<'s>,
    geo: Option<()>,
    coordinates: Option<()>,
    place: Option<()>,
    contributors: Option<()>,
    #[serde(default)]
    retweeted_status: Option<&'s Status<'s>>,
    retweet_count: u32,
    favorite_count: u32,
    entities: StatusEntities<'s>,
    favorited: bool,
    retweeted: bool,
    #[serde(default)]
    possibly_sensitive: Option<bool>,
    lang: &'s str,
}

#[derive(DeserializeIn, Serialize)]
struct StatusMetadata<'s> {
    result_type: &'s str,
    iso_language_code: &'s str,
}

#[derive(DeserializeIn, Serialize)]
struct User<'s> {
    id: u64,
    id_str: &'s str,
    name: &'s str,
    screen_name: &'s str,
    location: &'s str,
    description: &'s str,
    url: Option<&'s str>,
    entities: UserEntities<'s>,
    protected: bool,
    followers_count: u32,
    friends_count: u32,
    listed_count: u32,
    created_at: &'s str,
    favourites_count: u32,
    utc_offset: Option<i32>,
    time_zone: Option<&'s str>,
    geo_enabled: bool,
    verified: bool,
    statuses_count: u32,
    lang: &'s str,
    contributors_enabled: bool,
    is_translator: bool,
    is_translation_enabled: bool,
    profile_background_color: &'s str,
    profile_background_image_url: &'s str,
    profile_background_image_url_https: &'s str,
    profile_background_tile: bool,
    profile_image_url: &'s str,
    profile_image_url_https: &'s str,
    #[serde(default)]
    profile_banner_url: Option<&'s str>,
    profile_link_color: &'s str,
    profile_sidebar_border_color: &'s str,
    profile_sidebar_fill_color: &'s str,
    profile_text_color: &'s str,
    profile_use_background_image: bool,
    default_profile: bool,
    default_profile_image: bool,
    following: bool,
    follow_request_sent: bool,
    notifications: bool,
}

#[derive(DeserializeIn, Serialize)]
struct UserEntities<'s> {
    description: Urls<'s>,
    #[serde(default)]
    url: Option<Urls<'s>>,
}

#[derive(DeserializeIn, Serialize)]
struct Urls<'s> {
    urls: &'s [Url<'s>],
}

#[derive(DeserializeIn, Serialize)]
struct Url<'s> {
    url: &'s str,
    expanded_url: &'s str,
    display_url: &'s str,
    indices: [u32; 2],
}

#[derive(DeserializeIn, Serialize)]
struct StatusEntities<'s> {
    hashtags: &'s [Hashtag<'s>],
    symbols: &'s [Hashtag<'s>],
    urls: &'s [Url<'s>],
    user_mentions: &'s [Mention<'s>],
    #[serde(default)]
    media: Option<&'s [Media<'s>]>,
}

#[derive(DeserializeIn, Serialize)]
struct Hashtag<'s> {
    text: &'s str,
    indices: [u32; 2],
}

#[derive(DeserializeIn, Serialize)]
struct Mention<'s> {
    screen_name: &'s str,
    name: &'s str,
    id: u64,
    id_str: &'s str,
    indices: [u32; 2],
}

#[derive(DeserializeIn, Serialize)]
struct Media<'s> {
    id: u64,
    id_str: &'s str,
    indices: [u32; 2],
    media_url: &'s str,
    media_url_https: &'s str,
    url: &'s str,
    display_url: &'s str,
    expanded_url: &'s str,
    r#type: &'s str,
    sizes: Sizes<'s>,
    #[serde(default)]
    source_status_id: Option<u64>,
    #[serde(default)]
    source_status_id_str: Option<&'s str>,
}

#[derive(DeserializeIn, Serialize)]
struct Sizes<'s> {
    medium: Size<'s>,
    small: Size<'s>,
    thumb: Size<'s>,
    large: Size<'s>,
}

#[derive(DeserializeIn, Serialize)]
struct Size<'s> {
    w: u32,
    h: u32,
    resize: &'s str,
}

#[derive(DeserializeIn, Serialize)]
struct SearchMetadata<'s> {
    completed_in: f64,
    max_id: u64,
    max_id_str: &'s str,
    next_results: &'s str,
    query: &'s str,
    refresh_url: &'s str,
    count: u32,
    since_id: u64,
    since_id_str: &'s str,
}

// ---- The three data sets ----

/// One data set: its file, its two type families, and a cheap count of its parts
/// (the same number from either family, or the types disagree).
trait DataSet {
    const FILE: &'static str;
    type Heap: DeserializeOwned + Serialize;
    type Scope<'s>: DeserializeIn<'s> + Serialize;
    fn count_heap(l: &Self::Heap) -> usize;
    fn count_scope(l: &Self::Scope<'_>) -> usize;
}

struct CanadaSet;

impl DataSet for CanadaSet {
    const FILE: &'static str = "canada";
    type Heap = HeapCanada;
    type Scope<'s> = Canada<'s>;
    fn count_heap(l: &HeapCanada) -> usize {
        l.features
            .iter()
            .flat_map(|f| &f.geometry.coordinates)
            .map(|r| 1 + r.len())
            .sum()
    }
    fn count_scope(l: &Canada<'_>) -> usize {
        l.features
            .iter()
            .flat_map(|f| f.geometry.coordinates)
            .map(|r| 1 + r.len())
            .sum()
    }
}

struct CitmSet;

impl DataSet for CitmSet {
    const FILE: &'static str = "citm_catalog";
    type Heap = HeapCitm;
    type Scope<'s> = Citm<'s>;
    fn count_heap(l: &HeapCitm) -> usize {
        let names = l.area_names.len()
            + l.seat_category_names.len()
            + l.sub_topic_names.len()
            + l.topic_sub_topics.values().map(Vec::len).sum::<usize>();
        let events: usize = l
            .events
            .values()
            .map(|e| e.name.len() + e.topic_ids.len())
            .sum();
        let areas: usize = l
            .performances
            .iter()
            .flat_map(|p| &p.seat_categories)
            .map(|c| c.areas.len())
            .sum();
        names + events + areas + l.performances.len()
    }
    fn count_scope(l: &Citm<'_>) -> usize {
        let names = l.area_names.len()
            + l.seat_category_names.len()
            + l.sub_topic_names.len()
            + l.topic_sub_topics
                .iter()
                .map(|(_, v)| v.len())
                .sum::<usize>();
        let events: usize = l
            .events
            .iter()
            .map(|(_, e)| e.name.len() + e.topic_ids.len())
            .sum();
        let areas: usize = l
            .performances
            .iter()
            .flat_map(|p| p.seat_categories)
            .map(|c| c.areas.len())
            .sum();
        names + events + areas + l.performances.len()
    }
}

struct TwitterSet;

impl DataSet for TwitterSet {
    const FILE: &'static str = "twitter";
    type Heap = HeapTwitter;
    type Scope<'s> = Twitter<'s>;
    fn count_heap(l: &HeapTwitter) -> usize {
        l.statuses
            .iter()
            .map(|s| {
                s.text.len()
                    + s.user.description.len()
                    + s.entities.user_mentions.len()
                    + s.retweeted_status.as_ref().map_or(0, |r| r.text.len())
            })
            .sum()
    }
    fn count_scope(l: &Twitter<'_>) -> usize {
        l.statuses
            .iter()
            .map(|s| {
                s.text.len()
                    + s.user.description.len()
                    + s.entities.user_mentions.len()
                    + s.retweeted_status.map_or(0, |r| r.text.len())
            })
            .sum()
    }
}

// ---- Loading ----

#[derive(Clone, Copy, PartialEq)]
enum Format {
    Json,
    Postcard,
}

impl Format {
    fn name(self) -> &'static str {
        match self {
            Format::Json => "JSON",
            Format::Postcard => "postcard",
        }
    }
}

fn heap_load<D: DataSet>(format: Format, bytes: &[u8]) -> D::Heap {
    match format {
        Format::Json => serde_json::from_slice(bytes).unwrap(),
        Format::Postcard => postcard::from_bytes(bytes).unwrap(),
    }
}

fn scope_load<'s, D: DataSet>(format: Format, s: &ScopeStack<'s>, bytes: &[u8]) -> D::Scope<'s> {
    match format {
        Format::Json => s
            .deserialize(&mut serde_json::Deserializer::from_slice(bytes))
            .unwrap(),
        Format::Postcard => s
            .deserialize(&mut postcard::Deserializer::from_bytes(bytes))
            .unwrap(),
    }
}

#[inline(never)]
fn profiled_heap_load<D: DataSet>(format: Format, bytes: &[u8]) -> D::Heap {
    heap_load::<D>(format, black_box(bytes))
}

#[inline(never)]
fn profiled_scope_load<'s, D: DataSet>(
    format: Format,
    s: &ScopeStack<'s>,
    bytes: &[u8],
) -> D::Scope<'s> {
    scope_load::<D>(format, s, black_box(bytes))
}

/// One data set's files, read and checked.
struct Files {
    name: &'static str,
    json: Vec<u8>,
    postcard: Vec<u8>,
    /// The count of its parts (see `DataSet`).
    count: usize,
}

impl Files {
    fn bytes(&self, format: Format) -> &[u8] {
        match format {
            Format::Json => &self.json,
            Format::Postcard => &self.postcard,
        }
    }
}

/// Reads `D`'s JSON file from `dir`, writes its postcard file from the heap types, and
/// checks that a scope load from either equals the heap load.
fn read_set<D: DataSet>(dir: &Path, memory: &mut LinearAllocator) -> Files {
    let path = dir.join(format!("{}.json", D::FILE));
    let json = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let heap: D::Heap = serde_json::from_slice(&json).unwrap();
    let postcard = postcard::to_allocvec(&heap).unwrap();
    let count = D::count_heap(&heap);
    let want = serde_json::to_value(&heap).unwrap();
    let files = Files {
        name: D::FILE,
        json,
        postcard,
        count,
    };
    for format in [Format::Json, Format::Postcard] {
        let back: D::Heap = heap_load::<D>(format, files.bytes(format));
        assert!(
            serde_json::to_value(&back).unwrap() == want,
            "{} from {}: the heap types lose data",
            D::FILE,
            format.name()
        );
        memory.scope("check", |s| {
            let level = scope_load::<D>(format, s, files.bytes(format));
            assert_eq!(D::count_scope(&level), count);
            assert!(
                serde_json::to_value(&level).unwrap() == want,
                "{} from {}: the scope copy differs from the heap copy",
                D::FILE,
                format.name()
            );
            println!(
                "{} from {}: {} bytes; the scope copy equals the heap copy; it takes {:.2} MB in its scope",
                D::FILE,
                format.name(),
                files.bytes(format).len(),
                s.used() as f64 / 1e6
            );
        });
    }
    files
}

/// This thread's CPU clock (wall time where there is none).
fn now() -> Duration {
    common::thread_cpu_time().unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
    })
}

/// `reps` loads of `files` in `format` into heap types; the loads' time.
fn time_heap<D: DataSet>(files: &Files, format: Format, reps: u32) -> Duration {
    let bytes = files.bytes(format);
    let mut total = Duration::ZERO;
    for _ in 0..reps {
        let t = now();
        let level = heap_load::<D>(format, black_box(bytes));
        total += now() - t;
        assert_eq!(D::count_heap(&level), files.count);
        drop(black_box(level));
    }
    total
}

/// `reps` loads of `files` in `format` into a scope; the loads' time.
fn time_scope<D: DataSet>(
    files: &Files,
    format: Format,
    reps: u32,
    memory: &mut LinearAllocator,
) -> Duration {
    let bytes = files.bytes(format);
    let mut total = Duration::ZERO;
    for _ in 0..reps {
        memory.scope("level", |s| {
            let t = now();
            let level = scope_load::<D>(format, s, black_box(bytes));
            total += now() - t;
            assert_eq!(D::count_scope(&level), files.count);
            black_box(&level);
        });
    }
    total
}

/// One file and format: its batch size and the per-load times of each round.
struct Case {
    set: usize,
    format: Format,
    reps: u32,
    heap: Vec<f64>,
    scope: Vec<f64>,
}

fn time_case(
    case: &Case,
    files: &[Files],
    heap_first: bool,
    memory: &mut LinearAllocator,
) -> (f64, f64) {
    let f = &files[case.set];
    let heap = || match case.set {
        0 => time_heap::<CanadaSet>(f, case.format, case.reps),
        1 => time_heap::<CitmSet>(f, case.format, case.reps),
        _ => time_heap::<TwitterSet>(f, case.format, case.reps),
    };
    let scope = |m: &mut LinearAllocator| match case.set {
        0 => time_scope::<CanadaSet>(f, case.format, case.reps, m),
        1 => time_scope::<CitmSet>(f, case.format, case.reps, m),
        _ => time_scope::<TwitterSet>(f, case.format, case.reps, m),
    };
    let (h, s) = if heap_first {
        let h = heap();
        (h, scope(memory))
    } else {
        let s = scope(memory);
        (heap(), s)
    };
    let per = |d: Duration| d.as_secs_f64() * 1e9 / case.reps as f64;
    (per(h), per(s))
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn profile(dir: &Path, format: Format, memory: &mut LinearAllocator) {
    match std::env::var("LEVEL_LOAD_LEVEL").as_deref() {
        Ok("citm_catalog") => profile_set::<CitmSet>(dir, format, memory),
        Ok("twitter") => profile_set::<TwitterSet>(dir, format, memory),
        _ => profile_set::<CanadaSet>(dir, format, memory),
    }
}

/// One load each way, inside the profiled functions; the heap types first (once to
/// warm malloc's arena, once counted), the scope after a warm-up load that reserves
/// the thread's staging blocks outside the count.
fn profile_set<D: DataSet>(dir: &Path, format: Format, memory: &mut LinearAllocator) {
    let files = read_set::<D>(dir, memory);
    let bytes = files.bytes(format);
    drop(black_box(heap_load::<D>(format, bytes)));
    let heap = profiled_heap_load::<D>(format, bytes);
    assert_eq!(D::count_heap(&heap), files.count);
    drop(heap);
    memory.scope("warm", |w| {
        black_box(D::count_scope(&scope_load::<D>(format, w, bytes)));
    });
    memory.scope("level", |l| {
        let level = profiled_scope_load::<D>(format, l, bytes);
        assert_eq!(D::count_scope(&level), files.count);
    });
}

fn data_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os("LEVEL_LOAD_DATA")?);
    let all = ["canada", "citm_catalog", "twitter"]
        .iter()
        .all(|f| dir.join(format!("{f}.json")).is_file());
    if !all {
        println!(
            "level_real: {} lacks canada.json, citm_catalog.json or twitter.json; skipped",
            dir.display()
        );
        return None;
    }
    Some(dir)
}

fn main() {
    let Some(dir) = data_dir() else {
        println!(
            "level_real: set LEVEL_LOAD_DATA to a folder with json-benchmark's canada.json, \
             citm_catalog.json and twitter.json to run it (docs/PERFORMANCE.md says how \
             to get them); skipped"
        );
        return;
    };
    let mut memory = LinearAllocator::with_capacity(64 << 20).unwrap();
    if let Ok(format) = std::env::var("LEVEL_LOAD_PROFILE") {
        let format = if format == "json" {
            Format::Json
        } else {
            Format::Postcard
        };
        return profile(&dir, format, &mut memory);
    }
    let smoke = std::env::args().any(|a| a == "--test");
    let files = [
        read_set::<CanadaSet>(&dir, &mut memory),
        read_set::<CitmSet>(&dir, &mut memory),
        read_set::<TwitterSet>(&dir, &mut memory),
    ];
    let rounds: usize = if smoke {
        1
    } else {
        std::env::var("LEVEL_REAL_ROUNDS")
            .ok()
            .and_then(|r| r.parse().ok())
            .unwrap_or(21)
    };
    // Batches of about 40 ms per way, from one load each way (which also warms both).
    let mut cases = Vec::new();
    for set in 0..files.len() {
        for format in [Format::Json, Format::Postcard] {
            let mut case = Case {
                set,
                format,
                reps: 1,
                heap: Vec::new(),
                scope: Vec::new(),
            };
            let (h, s) = time_case(&case, &files, true, &mut memory);
            if !smoke {
                case.reps = (40e6 / h.max(s)).clamp(1.0, 10_000.0) as u32;
            }
            cases.push(case);
        }
    }
    for round in 0..rounds {
        for case in &mut cases {
            let (h, s) = time_case(case, &files, round % 2 == 0, &mut memory);
            case.heap.push(h);
            case.scope.push(s);
        }
    }
    println!();
    println!(
        "Loads: thread CPU time, median of {rounds} interleaved rounds (per load); scope ÷ heap"
    );
    println!(
        "{:<14} {:<9} {:>6} {:>12} {:>12} {:>14} {:>16}",
        "file", "format", "batch", "heap", "scope", "ratio medians", "median of ratios"
    );
    for case in &cases {
        let (h, s) = (median(&case.heap), median(&case.scope));
        let ratios: Vec<f64> = case
            .scope
            .iter()
            .zip(&case.heap)
            .map(|(s, h)| s / h)
            .collect();
        println!(
            "{:<14} {:<9} {:>6} {:>9.1} µs {:>9.1} µs {:>14.3} {:>16.3}",
            files[case.set].name,
            case.format.name(),
            case.reps,
            h / 1e3,
            s / 1e3,
            s / h,
            median(&ratios)
        );
    }
}
