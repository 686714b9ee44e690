//! Borrowed, typed reading of a Responses request body's `input` items.
//!
//! No tagged or untagged enums: one flat struct per item with the fields
//! that matter, everything else skipped, strings borrowed from the body.

use std::{borrow::Cow, fmt};

use serde::{
    Deserialize, Deserializer,
    de::{self, SeqAccess, Visitor},
};
use serde_json::value::RawValue;

pub(crate) use crate::call_kind::CallKind;
use crate::splice::Raw;

/// The top level of a request body.
#[derive(Deserialize)]
pub(super) struct Body<'a> {
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    pub model: Option<Cow<'a, str>>,
    #[serde(default)]
    pub stream: Option<bool>,
    #[serde(borrow, default)]
    pub input: Option<Input<'a>>,
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    pub previous_response_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub instructions: Option<Raw<'a>>,
    /// `conversation`: the id of the stored conversation the request adds
    /// to (see [`conversation`]).
    #[serde(borrow, deserialize_with = "conversation", default)]
    pub conversation: Option<Cow<'a, str>>,
}

/// `conversation`, as its id (a string) or as an object with an `id`; any
/// other value (or an object without a string `id`) names none: the
/// request is read all the same.
fn conversation<'de: 'a, 'a, D: Deserializer<'de>>(d: D) -> Result<Option<Cow<'a, str>>, D::Error> {
    d.deserialize_any(ConversationVisitor { top: true })
        .map(|ConversationId(id)| id)
}

/// A conversation's id, if the value names one.
struct ConversationId<'a>(Option<Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for ConversationId<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ConversationVisitor { top: false })
    }
}

/// Reads a conversation id: a string; at the top, also an object's `id`.
struct ConversationVisitor {
    top: bool,
}

impl<'de> Visitor<'de> for ConversationVisitor {
    type Value = ConversationId<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a conversation id or an object with one")
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(ConversationId(Some(Cow::Borrowed(v))))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(ConversationId(Some(Cow::Owned(v.to_owned()))))
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut id = None;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            if self.top && key == "id" && id.is_none() {
                id = map.next_value::<ConversationId<'de>>()?.0;
            } else {
                map.next_value::<de::IgnoredAny>()?;
            }
        }
        Ok(ConversationId(id))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<de::IgnoredAny>()?.is_some() {}
        Ok(ConversationId(None))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(ConversationId(None))
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(ConversationId(None))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(ConversationId(None))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(ConversationId(None))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(ConversationId(None))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(ConversationId(None))
    }
}

/// `input`: a string, or an array of items.
pub(super) enum Input<'a> {
    Text(Cow<'a, str>),
    Items {
        items: Vec<Item<'a>>,
        /// The raw text of the items the first-turn hash reads (see
        /// [`Item::opens_head`]).
        head: Vec<Raw<'a>>,
    },
}

/// One input item; only the fields that matter for tool calls.
#[derive(Deserialize, Default)]
pub(super) struct Item<'a> {
    #[serde(
        borrow,
        deserialize_with = "crate::splice::opt_cow",
        default,
        rename = "type"
    )]
    pub kind: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    pub role: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    pub id: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    pub call_id: Option<Cow<'a, str>>,
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    pub name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub arguments: Option<Args<'a>>,
    #[serde(borrow, default)]
    pub input: Option<Args<'a>>,
    /// Raw: decoded only when the result is read (a string or content
    /// parts, see [`Text`]).
    #[serde(borrow, default)]
    pub output: Option<Raw<'a>>,
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    pub status: Option<Cow<'a, str>>,
    /// A built-in `shell`, `local_shell` or `computer` call's arguments.
    #[serde(borrow, default)]
    pub action: Option<Raw<'a>>,
    /// A built-in `computer` call's batched actions (the GA computer
    /// tool's form of its arguments, in place of `action`).
    #[serde(borrow, default)]
    pub actions: Option<Raw<'a>>,
    /// A built-in `apply_patch` call's arguments.
    #[serde(borrow, default)]
    pub operation: Option<Raw<'a>>,
    /// A tool search's: `client` or `server` (see [`CallKind::of_tool_search`]).
    #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
    pub execution: Option<Cow<'a, str>>,
}

/// What an item is, for pairing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// A call the client runs: a function, custom or built-in tool's.
    Call(CallKind),
    /// The output that answers one.
    Output(CallKind),
    /// Produced by the model: an assistant message, reasoning, a hosted
    /// tool call (which the provider runs itself).
    Assistant,
    /// An `item_reference`: points at a stored item we cannot see.
    Reference,
    /// Anything else (user, system, developer messages…).
    Other,
}

impl<'a> Item<'a> {
    /// Whether the input's head goes on past this item: a system or
    /// developer message, which comes before the conversation's first turn
    /// (as the instructions do) when a client sends its prompt as an item.
    pub fn opens_head(&self) -> bool {
        self.kind.as_deref().is_none_or(|k| k == "message")
            && matches!(self.role.as_deref(), Some("system" | "developer"))
    }

    /// What this item is.
    pub fn role(&self) -> Role {
        let Some(k) = self.kind.as_deref() else {
            return match self.role.as_deref() {
                Some("assistant") => Role::Assistant,
                _ => Role::Other,
            };
        };
        if let Some(call) = CallKind::of_call(k) {
            return Role::Call(call);
        }
        if let Some(output) = CallKind::of_output(k) {
            return Role::Output(output);
        }
        match CallKind::of_tool_search(k, self.execution.as_deref(), self.call_id.as_deref()) {
            Some(false) => return Role::Call(CallKind::ToolSearch),
            Some(true) => return Role::Output(CallKind::ToolSearch),
            None => {}
        }
        match k {
            "item_reference" => Role::Reference,
            // The provider's own tool search answers itself in its turn.
            "reasoning" | "mcp_list_tools" | "mcp_approval_request" | "tool_search_output" => {
                Role::Assistant
            }
            _ if k.ends_with("_call") => Role::Assistant,
            _ if self.role.as_deref() == Some("assistant") => Role::Assistant,
            _ => Role::Other,
        }
    }

    /// The call id an item names: its `call_id`; a
    /// `local_shell_call_output` without one names its call by `id`, as the
    /// API's type for it has it (the OpenAI Agents SDK sends `call_id`).
    pub fn call_id(&self) -> Option<&Cow<'a, str>> {
        match (&self.call_id, self.kind.as_deref()) {
            (Some(id), _) => Some(id),
            (None, Some("local_shell_call_output")) => self.id.as_ref(),
            (None, _) => None,
        }
    }

    /// A call's tool name: its `name`, or a built-in tool's own.
    pub fn tool_name(&self, kind: CallKind) -> Cow<'a, str> {
        match (kind.builtin_name(), &self.name) {
            (Some(builtin), None) => Cow::Borrowed(builtin),
            (_, Some(name)) => name.clone(),
            (None, None) => Cow::Borrowed(""),
        }
    }

    /// A built-in call's arguments as JSON text: its `action`, a computer
    /// call's batched `actions`, or an `apply_patch` call's `operation`.
    pub fn builtin_arguments(&self) -> Option<Raw<'a>> {
        self.action.or(self.actions).or(self.operation)
    }

    /// A call's arguments: a function's `arguments`, a custom tool's
    /// `input`, a built-in's [`builtin_arguments`](Self::builtin_arguments).
    pub fn call_arguments(&self) -> Cow<'a, str> {
        match (&self.arguments, &self.input, self.builtin_arguments()) {
            (Some(a), _, _) => a.0.clone(),
            (None, Some(i), _) => i.0.clone(),
            (None, None, Some(raw)) => Cow::Borrowed(raw.0),
            (None, None, None) => Cow::Borrowed(""),
        }
    }
}

/// Text that may come as a string or an array of content parts (text
/// parts joined by newlines; other parts skipped): an output's `output`.
/// Any other value is an error (of that result only: outputs are decoded
/// when read).
#[derive(Debug, Default)]
pub(super) struct Text<'a>(pub Cow<'a, str>);

/// A call's `arguments` or `input`: as [`Text`], or any other value as its
/// compact JSON text. A `tool_search_call`'s `arguments` are an object,
/// and one such item must not make the whole body unreadable.
#[derive(Debug, Default)]
pub(super) struct Args<'a>(pub Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TextVisitor::<false>(std::marker::PhantomData))
            .map(Text)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Args<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TextVisitor::<true>(std::marker::PhantomData))
            .map(Args)
    }
}

/// Reads [`Text`]; with `ANY`, [`Args`].
struct TextVisitor<'a, const ANY: bool>(std::marker::PhantomData<&'a ()>);

impl<'a, const ANY: bool> TextVisitor<'a, ANY> {
    /// Any other value's JSON text, when `ANY`.
    fn json<E: de::Error>(
        v: serde_json::Value,
        what: de::Unexpected<'_>,
    ) -> Result<Cow<'a, str>, E> {
        if ANY {
            Ok(Cow::Owned(v.to_string()))
        } else {
            Err(E::invalid_type(
                what,
                &"a string or an array of content parts",
            ))
        }
    }
}

impl<'de: 'a, 'a, const ANY: bool> Visitor<'de> for TextVisitor<'a, ANY> {
    type Value = Cow<'a, str>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or an array of content parts")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(""))
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Self::json(v.into(), de::Unexpected::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Self::json(v.into(), de::Unexpected::Signed(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Self::json(v.into(), de::Unexpected::Unsigned(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Self::json(v.into(), de::Unexpected::Float(v))
    }
    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        if !ANY {
            return Err(de::Error::invalid_type(de::Unexpected::Map, &self));
        }
        let v = serde_json::Value::deserialize(de::value::MapAccessDeserializer::new(map))?;
        Self::json(v, de::Unexpected::Map)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        #[derive(Deserialize)]
        struct Part<'a> {
            #[serde(borrow, deserialize_with = "crate::splice::opt_cow", default)]
            text: Option<Cow<'a, str>>,
        }
        let mut out: Option<Cow<'a, str>> = None;
        while let Some(part) = seq.next_element::<Part<'de>>()? {
            let Some(t) = part.text else { continue };
            out = Some(match out {
                None => t,
                Some(prev) => {
                    let mut s = prev.into_owned();
                    s.push('\n');
                    s.push_str(&t);
                    Cow::Owned(s)
                }
            });
        }
        Ok(out.unwrap_or(Cow::Borrowed("")))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Input<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Input<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an array of input items")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Input::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Input::Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Input::Text(Cow::Owned(v)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(8));
                let mut head = Vec::new();
                // The head's items from their raw text, the rest directly.
                while let Some(raw) = seq.next_element::<&'de RawValue>()? {
                    let item: Item<'de> =
                        serde_json::from_str(raw.get()).map_err(de::Error::custom)?;
                    head.push(Raw(raw.get()));
                    let more = item.opens_head();
                    items.push(item);
                    if !more {
                        break;
                    }
                }
                while let Some(item) = seq.next_element::<Item<'de>>()? {
                    items.push(item);
                }
                Ok(Input::Items { items, head })
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}
